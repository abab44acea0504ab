-- The number of buckets the hosts are spread over (frontier/buckets.py).

-- name: count
SELECT n FROM frontier_buckets;
