"""FRONTIER_ALLOWED_NETWORKS, the rule itself (frontier.allowed_networks): what an entry
is, how it matches (a network by address, a host name by the name requested), metadata
addresses only by exact address, and a malformed entry named at start-up."""

from __future__ import annotations

import ipaddress

import pytest

from frontier.allowed_networks import AllowedNetworks, split_entries
from frontier.safe_http.limits import HttpLimits
from frontier.safe_http.ssrf import address_is_public
from frontier.settings import Settings, SettingsError

ALLOWED = AllowedNetworks.parse(
    split_entries("10.1.0.0/16, fd12:3456::/48 ,127.0.0.2, Wiki.Intranet.Example., ")
)


@pytest.mark.parametrize(
    ("address", "name", "public"),
    [
        ("10.1.2.3", None, True),  # inside 10.1.0.0/16
        ("10.2.0.1", None, False),  # another private network
        ("127.0.0.2", None, True),  # a bare address: that one host
        ("127.0.0.1", None, False),  # the rest of loopback stays refused
        ("::1", None, False),
        ("::ffff:127.0.0.2", None, True),  # judged by the IPv4 address it carries
        ("fd12:3456::9", None, True),
        ("fd12:3457::9", None, False),
        ("192.168.1.5", "wiki.intranet.example", True),  # the name's answer, whatever it is
        ("192.168.1.5", "WIKI.intranet.example.", True),  # the same DNS name
        ("192.168.1.5", "evil.example", False),  # another name to the same address
        ("192.168.1.5", "sub.wiki.intranet.example", False),  # exact names, no subdomains
        ("192.168.1.5", None, False),  # the address itself, as an IP literal
        ("8.8.8.8", None, True),  # public addresses are unaffected
    ],
)
def test_a_network_matches_by_address_and_a_name_by_the_name_requested(
    address: str, name: str | None, public: bool
) -> None:
    assert address_is_public(address, ALLOWED, name) is public


@pytest.mark.parametrize("metadata", ["169.254.169.254", "fd00:ec2::254", "169.254.170.2"])
def test_metadata_addresses_pass_only_when_listed_exactly(metadata: str) -> None:
    ip = ipaddress.ip_address(metadata)
    network = ipaddress.ip_network(metadata).supernet(new_prefix=16 if ip.version == 4 else 8)
    around = AllowedNetworks.parse([str(network), "meta.example"])
    assert not address_is_public(metadata, around)  # a network that merely contains it
    assert not address_is_public(metadata, around, "meta.example")  # a name resolving to it
    assert address_is_public(metadata, AllowedNetworks.parse([metadata]))
    assert address_is_public(metadata, AllowedNetworks.parse([f"{metadata}/{ip.max_prefixlen}"]))


def test_nothing_is_allowed_by_default() -> None:
    assert not AllowedNetworks.parse(split_entries(""))
    assert not address_is_public("10.1.2.3")
    assert not address_is_public("127.0.0.2")


@pytest.mark.parametrize(
    ("value", "bad"),
    [
        ("10.0.0.0/8, 10.0.0.1/8", "10.0.0.1/8"),  # host bits set: a typo
        ("10.0.0.0/33", "10.0.0.0/33"),
        ("wiki.example, my wiki", "my wiki"),
        ("*.intranet.example", "*.intranet.example"),
        ("192.168.0.257", "192.168.0.257"),
        ("fd00::/200", "fd00::/200"),
        ("http://wiki.example/", "http://wiki.example/"),
    ],
)
def test_a_malformed_entry_is_a_settings_error_naming_it(value: str, bad: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.load(allowed_networks=value, _env_file=None)
    message = str(caught.value)
    assert "FRONTIER_ALLOWED_NETWORKS" in message and repr(bad) in message


def test_the_setting_reaches_the_clients_limits() -> None:
    settings = Settings.load(allowed_networks="10.1.0.0/16, wiki.example", _env_file=None)
    limits = HttpLimits.from_settings(settings)
    assert limits.allowed_networks == ("10.1.0.0/16", "wiki.example")
