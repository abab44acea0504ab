"""Buckets (frontier/buckets.py): a fixed function of the host, and the claim rotation."""

from __future__ import annotations

from frontier.buckets import BucketRotation, bucket_of, by_bucket


def test_one_bucket_holds_every_host() -> None:
    assert {bucket_of(host, 1) for host in ("a.example", "b.example", "")} == {0}


def test_the_bucket_is_the_first_four_bytes_of_sha256_modulo_n() -> None:
    # sha256("example.com") = a379a6f6...: a fixed value, whatever the Python or PostgreSQL
    assert bucket_of("example.com", 2**32) == 0xA379A6F6
    assert bucket_of("example.com", 6) == 0xA379A6F6 % 6
    assert [bucket_of("example.com", n) for n in (2, 7, 64)] == [0, 0xA379A6F6 % 7, 54]


def test_hosts_spread_over_the_buckets() -> None:
    hosts = [f"site{i}.example" for i in range(4000)]
    groups = by_bucket(hosts, str, 8)
    assert sorted(groups) == list(range(8))
    assert all(350 < len(group) < 650 for group in groups.values())
    assert sorted(h for group in groups.values() for h in group) == sorted(hosts)


def test_the_rotation_starts_one_bucket_later_each_claim() -> None:
    rotation = BucketRotation(4, start=6)
    assert rotation.order() == [2, 3, 0, 1]
    assert rotation.order() == [3, 0, 1, 2]
    assert rotation.order() == [0, 1, 2, 3]
    assert BucketRotation(1).order() == [0]
