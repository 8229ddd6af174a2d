"""`--command-config`: the Kafka client properties file `kafka-consumer-groups.sh` takes.

Only what the exporter can honour is accepted; any other key is an error naming it (a
silently ignored `ssl.truststore.location` would connect without the trust the operator
asked for). Secrets are kept out of `repr`, logs and `_snapshot.json`: `describe()` is the
only view of the settings that leaves this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


class CommandConfigError(ValueError):
    """The properties file is unreadable or asks for something unsupported (exit 2)."""


PROTOCOLS = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}
MECHANISMS = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
SUPPORTED = {
    "security.protocol",
    "ssl.ca.location",  # librdkafka's name
    "ssl.truststore.location",  # only with ssl.truststore.type=PEM
    "ssl.truststore.type",
    "ssl.keystore.location",  # only with ssl.keystore.type=PEM
    "ssl.keystore.type",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
    "sasl.mechanism",
    "sasl.jaas.config",
    "sasl.username",
    "sasl.password",
    "client.id",
    "request.timeout.ms",
}
SECRET_KEYS = {"ssl.key.password", "sasl.jaas.config", "sasl.password"}
_JAAS = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class ClientSettings:
    """kafka-python keyword arguments; secrets are excluded from repr."""

    kwargs: dict[str, Any] = field(default_factory=dict, repr=False)
    shown: dict[str, str] = field(default_factory=dict)

    def describe(self) -> dict[str, str]:
        return dict(self.shown)


def parse_properties(text: str) -> dict[str, str]:
    """Java `.properties`: `key=value` or `key: value`, `#`/`!` comments, `\\` continuations."""
    props: dict[str, str] = {}
    lines = iter(text.splitlines())
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        while line.endswith("\\"):
            line = line[:-1] + next(lines, "").strip()
        m = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
        if not m:
            props[line] = ""
            continue
        props[m.group(1)] = m.group(2).strip()
    return props


def load_command_config(path: str | None) -> ClientSettings:
    if path is None:
        return ClientSettings({}, {"security.protocol": "PLAINTEXT"})
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise CommandConfigError(f"--command-config {path}: {exc.strerror}") from exc
    return settings_from(parse_properties(text), path)


def _sasl_credentials(props: dict[str, str], mechanism: str) -> tuple[str, str]:
    user, password = props.get("sasl.username"), props.get("sasl.password")
    jaas = props.get("sasl.jaas.config")
    if jaas:
        module = jaas.split()[0] if jaas.split() else ""
        expected = "PlainLoginModule" if mechanism == "PLAIN" else "ScramLoginModule"
        if not module.endswith(expected):
            raise CommandConfigError(
                f"sasl.jaas.config uses {module or 'no login module'}; sasl.mechanism={mechanism}"
                f" needs org.apache.kafka.common.security.*.{expected}"
            )
        found = dict(_JAAS.findall(jaas))
        user, password = found.get("username", user), found.get("password", password)
    if not user or password is None:
        raise CommandConfigError(
            f"sasl.mechanism={mechanism} needs a username and password (sasl.jaas.config, or"
            " sasl.username and sasl.password)"
        )
    return user, password


def _pem_only(props: dict[str, str], kind: str) -> None:
    if f"ssl.{kind}.location" in props and props.get(f"ssl.{kind}.type", "").upper() != "PEM":
        raise CommandConfigError(
            f"ssl.{kind}.location needs ssl.{kind}.type=PEM: JKS and PKCS12 stores are not"
            " readable without a JVM; convert them to PEM files"
        )


def _ssl(props: dict[str, str], kwargs: dict[str, Any], shown: dict[str, str]) -> None:
    _pem_only(props, "truststore")
    _pem_only(props, "keystore")
    ca = props.get("ssl.ca.location") or props.get("ssl.truststore.location")
    cert = props.get("ssl.certificate.location") or props.get("ssl.keystore.location")
    key = props.get("ssl.key.location") or props.get("ssl.keystore.location")
    for name, value in (("ssl_cafile", ca), ("ssl_certfile", cert), ("ssl_keyfile", key)):
        if value:
            kwargs[name] = value
            shown[name.replace("_", ".")] = value
    if "ssl.key.password" in props:
        kwargs["ssl_password"] = props["ssl.key.password"]
        shown["ssl.key.password"] = "[hidden]"
    # Java's default is https (hostname verified); an empty value turns it off.
    check = props.get("ssl.endpoint.identification.algorithm", "https").lower() == "https"
    kwargs["ssl_check_hostname"] = check
    shown["ssl.endpoint.identification.algorithm"] = "https" if check else ""


def settings_from(props: dict[str, str], source: str = "--command-config") -> ClientSettings:
    unsupported = sorted(set(props) - SUPPORTED)
    if unsupported:
        raise CommandConfigError(
            f"{source}: unsupported keys {', '.join(unsupported)} (supported: "
            f"{', '.join(sorted(SUPPORTED))})"
        )
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise CommandConfigError(f"security.protocol={protocol} is not one of {sorted(PROTOCOLS)}")
    kwargs: dict[str, Any] = {"security_protocol": protocol}
    shown = {"security.protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        _ssl(props, kwargs, shown)
    if protocol.startswith("SASL_"):
        mechanism = props.get("sasl.mechanism", "GSSAPI").upper()
        if mechanism not in MECHANISMS:
            raise CommandConfigError(
                f"sasl.mechanism={mechanism} is not supported (supported: {sorted(MECHANISMS)})"
            )
        user, password = _sasl_credentials(props, mechanism)
        kwargs.update(
            sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password
        )
        shown.update({"sasl.mechanism": mechanism, "sasl.username": user})
    elif "sasl.mechanism" in props:
        raise CommandConfigError(f"sasl.mechanism is set but security.protocol={protocol}")
    if "client.id" in props:
        kwargs["client_id"] = shown["client.id"] = props["client.id"]
    if "request.timeout.ms" in props:
        try:
            kwargs["request_timeout_ms"] = int(props["request.timeout.ms"])
        except ValueError as exc:
            raise CommandConfigError("request.timeout.ms must be an integer") from exc
        shown["request.timeout.ms"] = props["request.timeout.ms"]
    return ClientSettings(kwargs, shown)
