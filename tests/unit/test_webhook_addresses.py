"""Where webhook deliveries may go: public addresses; loopback only when the URL names it
(and, off loopback, only when the operator allows it); private networks only when the
operator allows them; link-local (cloud metadata) never."""

from __future__ import annotations

import pytest

from fiftyk_referee.service.errors import InvalidArgument
from fiftyk_referee.service.ops.config import Config
from fiftyk_referee.service.ops.webhook_settings import WebhookSettingsError, parse_webhook_settings
from fiftyk_referee.service.platform.webhook_addresses import address_allowed, check_url

PUBLIC = ("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c")
PRIVATE = ("10.0.0.5", "172.16.3.4", "192.168.1.10", "100.64.0.1", "fd12:3456:789a::1")
REAL_SECRETS = {"token_secret": "token-secret-0123456789abcdef",
                "audit_key": "audit-key-0123456789abcdef",
                "platform_key": "platform-key-0123456789abcdef", "signing_key": "5e" * 32}
NEVER = ("169.254.169.254", "fe80::1", "0.0.0.0", "::", "224.0.0.1", "240.0.0.1",
         "ff02::1", "not an address")


@pytest.mark.parametrize("address", PUBLIC)
def test_a_public_address_is_allowed(address: str) -> None:
    assert address_allowed("hooks.example.com", address)


@pytest.mark.parametrize("address", PRIVATE)
def test_a_private_address_needs_the_operators_consent(address: str) -> None:
    assert not address_allowed("hooks.example.com", address)
    assert address_allowed("hooks.example.com", address, private=True)


@pytest.mark.parametrize("address", NEVER)
def test_link_local_multicast_unspecified_and_reserved_addresses_are_never_allowed(
        address: str) -> None:
    assert not address_allowed("hooks.example.com", address, private=True)


@pytest.mark.parametrize("address", ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"])
def test_loopback_is_reached_only_by_a_url_that_names_it(address: str) -> None:
    assert not address_allowed("hooks.example.com", address, private=True)
    for host in ("localhost", "127.0.0.1", "::1"):
        assert address_allowed(host, address)


@pytest.mark.parametrize("template", ["::ffff:{}", "64:ff9b::{}", "2002:{}::1"])
def test_an_ipv6_address_standing_for_an_ipv4_one_is_judged_as_that(template: str) -> None:
    def address(ipv4: str) -> str:
        if template.startswith("2002"):  # 6to4 carries the IPv4 address as two hex groups
            a, b, c, d = (int(part) for part in ipv4.split("."))
            return template.format(f"{a:02x}{b:02x}:{c:02x}{d:02x}")
        return template.format(ipv4)

    assert not address_allowed("hooks.example.com", address("10.0.0.5"))
    assert not address_allowed("hooks.example.com", address("127.0.0.1"), private=True)
    assert address_allowed("hooks.example.com", address("93.184.215.14"))


@pytest.mark.parametrize("url", ["https://10.0.0.5/hooks", "https://169.254.169.254/",
                                 "https://[fe80::1]/", "https://[::ffff:10.1.1.1]:8443/",
                                 "https://0.0.0.0/"])
def test_registration_refuses_a_url_naming_an_address_deliveries_may_not_go_to(
        url: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        check_url(url)
    assert "may not go to" in str(refused.value)


def test_registration_takes_names_loopback_and_consented_private_addresses() -> None:
    for url in ("https://hooks.example.com/x", "https://93.184.215.14/", "http://[::1]:8080/",
                "http://127.0.0.1:9/hooks", "https://localhost/"):
        assert check_url(url) == url
    assert check_url("https://10.0.0.5/hooks", private=True) == "https://10.0.0.5/hooks"
    with pytest.raises(InvalidArgument):
        check_url("https://169.254.169.254/", private=True)


def test_the_private_setting_is_a_flag() -> None:
    assert not parse_webhook_settings("").private
    assert parse_webhook_settings("private=1").private
    assert not parse_webhook_settings("private=0,attempts=3").private
    with pytest.raises(WebhookSettingsError, match="private"):
        parse_webhook_settings("private=yes")


def test_the_niceness_setting_is_a_whole_number_from_0_to_19() -> None:
    assert parse_webhook_settings("").niceness == 0
    assert parse_webhook_settings("niceness=5").niceness == 5
    assert parse_webhook_settings("niceness=19,attempts=3").niceness == 19
    for wrong in ("20", "-1", "2.5", "low"):
        with pytest.raises(WebhookSettingsError, match="niceness"):
            parse_webhook_settings(f"niceness={wrong}")


def test_off_loopback_loopback_endpoints_need_the_operators_consent() -> None:
    assert not address_allowed("localhost", "127.0.0.1", loopback=False)
    assert not address_allowed("::1", "::1", private=True, loopback=False)
    for url in ("http://127.0.0.1:9/hooks", "http://localhost:8080/", "https://[::1]/",
                "http://127.9.9.9/"):
        with pytest.raises(InvalidArgument) as refused:
            check_url(url, loopback=False)
        assert "loopback=1" in str(refused.value)
    assert check_url("https://hooks.example.com/x", loopback=False)


@pytest.mark.parametrize(("host", "spec", "allowed"), [
    ("127.0.0.1", "", True), ("::1", "", True), ("localhost", "", True),
    ("127.0.0.2", "", True),  # all of 127/8 is loopback
    ("0.0.0.0", "", False), ("::", "", False), ("10.0.0.5", "", False),
    ("0.0.0.0", "loopback=1", True), ("127.0.0.1", "loopback=0", False)])
def test_loopback_endpoints_follow_the_servers_bind_unless_the_operator_says(
        host: str, spec: str, allowed: bool) -> None:
    config = Config(host=host, trusted_network=True, webhooks=spec, **REAL_SECRETS).validate()
    assert config.webhook_settings.loopback is allowed


def test_the_loopback_setting_is_a_flag() -> None:
    assert parse_webhook_settings("").loopback is None
    assert parse_webhook_settings("loopback=1").loopback is True
    with pytest.raises(WebhookSettingsError, match="loopback"):
        parse_webhook_settings("loopback=yes")
