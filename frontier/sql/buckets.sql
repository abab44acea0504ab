-- The number of buckets the hosts are spread over (frontier/buckets.py), and whether the
-- schema is distributed over them (frontier.db.Database's `buckets`, `distributed`).

-- name: count
SELECT n FROM frontier_buckets;

-- name: distributed
-- Whether the schema is distributed over a Citus cluster: the database has the citus
-- extension (migration 0018 distributes the schema when it has).
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus');
