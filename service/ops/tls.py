"""TLS for every port the referee opens: the certificate and key come from files and are
reloaded when the files change (a renewed certificate needs no restart).

- gRPC: `dynamic_ssl_server_credentials`. gRPC asks the fetcher before every new
  connection's handshake; the fetcher compares the files' stamps (inode, size, mtime) and
  hands over a new configuration only when they changed, so the cost per connection is three
  `stat` calls. Connections already open keep the certificate they started with.
- Metrics: the HTTP server's listening socket gets a fresh `ssl.SSLContext` when the files
  change (`refresh`, called periodically by the composition root); new connections use it.
- A client CA (`FIFTYK_TLS_CLIENT_CA_FILE`) makes both ports require a client certificate
  signed by it (mutual TLS). gRPC cannot ask for a certificate without requiring one, so a
  deployment with client certificates has every caller present one — the health probes
  too (`fiftyk health --tls-cert --tls-key`; the deploy files give them the server's own
  certificate). A verified certificate that carries a name listed in
  `FIFTYK_TLS_PLATFORM_NAMES`, as its common name or as one of its subject alternative names
  (DNS, URI, e-mail or IP), holds the platform role (`PlatformCertificateInterceptor`), in
  place of the platform key: list only names the client CA issues to platforms.

A file that cannot be read or does not hold a usable certificate and key is refused at
start (`TlsError`); after start, a bad renewal is logged and the previous certificate kept.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import grpc

log = logging.getLogger(__name__)

Stamp = tuple[tuple[int, int, int], ...]


class TlsError(ValueError):
    """The TLS files cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class TlsFiles:
    """Where the server's certificate chain, its key and the optional client CA live."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file to watch."""
        return (self.cert, self.key) + ((self.client_ca,) if self.client_ca else ())


@dataclass(frozen=True)
class _Material:
    cert: bytes
    key: bytes
    client_ca: bytes | None


def _stamp(files: TlsFiles) -> Stamp:
    stamps = []
    for path in files.paths:
        status = os.stat(path)
        stamps.append((status.st_ino, status.st_size, status.st_mtime_ns))
    return tuple(stamps)


def _read(files: TlsFiles) -> _Material:
    """Read and check the files: the key must match the certificate, the CA must parse."""
    try:
        material = _Material(files.cert.read_bytes(), files.key.read_bytes(),
                             files.client_ca.read_bytes() if files.client_ca else None)
    except OSError as error:
        raise TlsError(f"cannot read {error.filename}: {error.strerror}") from None
    _context(files, material)  # raises TlsError when the material is unusable
    return material


def _context(files: TlsFiles, material: _Material) -> ssl.SSLContext:
    """A server SSLContext for the material (the files are loaded by path: ssl needs files)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(files.cert, files.key)
    except (ssl.SSLError, OSError) as error:
        raise TlsError(f"{files.cert} and {files.key} are not a certificate chain and its"
                       f" private key ({error})") from None
    if material.client_ca is not None:
        try:
            context.load_verify_locations(cadata=material.client_ca.decode("ascii"))
        except (ssl.SSLError, ValueError) as error:
            raise TlsError(f"{files.client_ca} is not a PEM CA certificate ({error})") from None
        context.verify_mode = ssl.CERT_REQUIRED
    return context


class CertificateReloader:
    """The current certificate material, re-read when its files change."""

    def __init__(self, files: TlsFiles) -> None:
        self.files = files
        self._lock = threading.Lock()
        self._stamp = _stamp(files)
        self._material = _read(files)
        self.version = 1
        self._grpc_version = 1

    @property
    def requires_client_certificate(self) -> bool:
        """Whether callers must present a certificate signed by the client CA."""
        return self.files.client_ca is not None

    def refresh(self) -> bool:
        """Re-read the files if they changed; True when new material was loaded."""
        try:
            stamp = _stamp(self.files)
        except OSError as error:  # mid-rename by a certificate manager: try next time
            log.warning("TLS files not readable, keeping the current certificate: %s", error)
            return False
        with self._lock:
            if stamp == self._stamp:
                return False
            try:
                material = _read(self.files)
            except TlsError as error:
                log.warning("TLS files changed but are unusable, keeping the current"
                            " certificate: %s", error)
                return False
            self._stamp, self._material = stamp, material
            self.version += 1
        log.info("TLS certificate reloaded", extra={"tls_cert": str(self.files.cert)})
        return True

    def _configuration(self) -> grpc.ServerCertificateConfiguration:
        material = self._material
        return grpc.ssl_server_certificate_configuration(
            [(material.key, material.cert)], root_certificates=material.client_ca)

    def _fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """gRPC's per-connection question: a new configuration, or None to keep the current."""
        self.refresh()
        with self._lock:
            if self._grpc_version == self.version:
                return None
            self._grpc_version = self.version
            return self._configuration()

    def grpc_credentials(self) -> grpc.ServerCredentials:
        """Server credentials that follow the files."""
        # gRPC documents None from the fetcher as "keep the current configuration"; the type
        # stubs leave it out.
        fetch = cast(Callable[[], grpc.ServerCertificateConfiguration], self._fetch)
        return grpc.dynamic_ssl_server_credentials(
            self._configuration(), fetch,
            require_client_authentication=self.requires_client_certificate)

    def ssl_context(self) -> ssl.SSLContext:
        """A server SSLContext of the current material (for the metrics endpoint)."""
        with self._lock:
            return _context(self.files, self._material)


__all__ = ["CertificateReloader", "TlsError", "TlsFiles"]
