"""A throwaway certificate authority for TLS tests: a CA, server and client certificates
made in the test (EC P-256), written as PEM files."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

VALIDITY = datetime.timedelta(days=1)
SKEW = datetime.timedelta(minutes=5)


@dataclass(frozen=True)
class Issued:
    """A certificate and its key as PEM bytes."""

    cert: bytes
    key: bytes

    def write(self, cert: Path, key: Path) -> tuple[Path, Path]:
        """Write both files (replacing the contents in place, as a renewal does)."""
        cert.write_bytes(self.cert)
        key.write_bytes(self.key)
        return cert, key


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class TestCA:
    """A certificate authority that exists only for one test."""

    __test__ = False  # not a test class, despite the name

    def __init__(self, name: str = "fiftyk test CA", *,
                 validity: datetime.timedelta = VALIDITY) -> None:
        self.validity = validity
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        self.name = _name(name)
        self._cert = (
            x509.CertificateBuilder().subject_name(self.name).issuer_name(self.name)
            .public_key(self._key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - SKEW).not_valid_after(now + validity)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.pem = self._cert.public_bytes(serialization.Encoding.PEM)

    def issue(self, common_name: str, *, hosts: tuple[str, ...] = ()) -> Issued:
        """A leaf certificate for `common_name`, valid for `hosts` (DNS names or IPs)."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(self.name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - SKEW).not_valid_after(now + self.validity)
        )
        if hosts:
            names: list[x509.GeneralName] = []
            for host in hosts:
                try:
                    names.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    names.append(x509.DNSName(host))
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        return Issued(
            cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()),
        )
