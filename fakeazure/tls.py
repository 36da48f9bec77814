"""A throwaway certificate authority and server certificate for the loopback server's TLS mode.

Azure SDK clients send a bearer token only over https (azcore ``BearerTokenPolicy``, Go:
sdk/azcore/runtime/policy_bearer_token.go; Python: azure.core.pipeline.policies
BearerTokenCredentialPolicy, "Bearer token authentication is not permitted for non-TLS
protected (non-https) URLs"), so an unmodified client (the Karpenter controller) needs the
fake on https.  The server certificate names ``IP:127.0.0.1`` and ``DNS:localhost`` (plus the
bound loopback address), and is signed by a CA generated next to it, so a client trusts the
fake by trusting ``ca.pem`` only (``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE`` or
``connection_verify=``), never by turning verification off.
"""
from __future__ import annotations

import datetime as _dt
import ipaddress
import os
import pathlib
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_FILE = "ca.pem"
CERT_FILE = "server.pem"
KEY_FILE = "server-key.pem"
VALID_DAYS = 30


@dataclass(frozen=True)
class TLSFiles:
    directory: pathlib.Path
    ca: pathlib.Path  # the CA certificate a client trusts
    cert: pathlib.Path  # the server certificate (leaf, then the CA)
    key: pathlib.Path  # the server's private key


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "fakeazure"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def generate(directory: str | os.PathLike, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> TLSFiles:
    """Write ``ca.pem``, ``server.pem`` and ``server-key.pem`` into ``directory`` (created if
    needed; the key is mode 0600).  ``hosts`` are the server certificate's subject alternative
    names (IP addresses as IP entries, other names as DNS entries)."""
    d = pathlib.Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(minutes=5)
    until = now + _dt.timedelta(days=VALID_DAYS)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("fakeazure test CA")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now).not_valid_after(until)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))

    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for h in dict.fromkeys(hosts):
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    cert = (x509.CertificateBuilder().subject_name(_name(hosts[0])).issuer_name(ca_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(until)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))

    pem = serialization.Encoding.PEM
    files = TLSFiles(d, d / CA_FILE, d / CERT_FILE, d / KEY_FILE)
    files.ca.write_bytes(ca.public_bytes(pem))
    files.cert.write_bytes(cert.public_bytes(pem) + ca.public_bytes(pem))
    fd = os.open(files.key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return files
