"""--command-config: the properties file kafka-consumer-groups.sh takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.export.config import (
    CommandConfigError,
    load_command_config,
    parse_properties,
    settings_from,
)

JAAS = (
    'org.apache.kafka.common.security.scram.ScramLoginModule required username="ops"'
    ' password="s3cr3t";'
)


def test_properties_syntax() -> None:
    text = (
        "# comment\n! also\nsecurity.protocol = SSL\nclient.id: exporter\n"
        "sasl.jaas.config=a \\\n  b\n"
    )
    assert parse_properties(text) == {
        "security.protocol": "SSL",
        "client.id": "exporter",
        "sasl.jaas.config": "a b",
    }


def test_scram_from_jaas_and_secret_hidden() -> None:
    s = settings_from(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": JAAS,
            "ssl.ca.location": "/ca.pem",
        }
    )
    assert s.kwargs["sasl_plain_username"] == "ops"
    assert s.kwargs["sasl_plain_password"] == "s3cr3t"
    assert s.kwargs["ssl_cafile"] == "/ca.pem"
    assert "s3cr3t" not in json.dumps(s.describe())
    assert "s3cr3t" not in repr(s)


def test_plain_with_username_password() -> None:
    s = settings_from(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "u",
            "sasl.password": "p",
        }
    )
    assert s.kwargs["sasl_mechanism"] == "PLAIN"
    assert s.describe() == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "u",
    }


def test_pem_ssl_files() -> None:
    s = settings_from(
        {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": "/ca.pem",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": "/client.pem",
            "ssl.key.password": "kp",
            "ssl.endpoint.identification.algorithm": "",
        }
    )
    assert s.kwargs["ssl_certfile"] == "/client.pem"
    assert s.kwargs["ssl_password"] == "kp"
    assert s.kwargs["ssl_check_hostname"] is False
    assert s.describe()["ssl.key.password"] == "[hidden]"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"ssl.truststore.password": "x", "bogus": "1"}, "bogus, ssl.truststore.password"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}, "GSSAPI"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}, "username and password"),
        ({"security.protocol": "SSL", "ssl.truststore.location": "/t.jks"}, "PEM"),
        (
            {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": JAAS},
            "PlainLoginModule",
        ),
        ({"security.protocol": "TLS"}, "TLS"),
    ],
)
def test_unsupported_settings_are_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(CommandConfigError, match=message):
        settings_from(props)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CommandConfigError, match=r"nope\.properties"):
        load_command_config(str(tmp_path / "nope.properties"))
