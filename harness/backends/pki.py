"""PKI for a throw-away control plane, generated in Python with `cryptography`.

https://kubernetes.io/docs/setup/best-practices/certificates/ and envtest's
sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/certs/tinyca.go (sigs.k8s.io/controller-runtime v0.23.1
pkg/internal/testing/controlplane/apiserver.go APIServer.defaultArgs,
https://kubernetes.io/docs/reference/access-authn-authz/node/): one cluster CA is both `--client-ca-file` and the
signer of
the serving cert; an SA key pair signs service-account tokens; client certs carry the identity in
the subject (CN = user name, O = groups): admin O=system:masters, controllers in a group bound to
cluster-admin by RBAC, kube-scheduler CN=system:kube-scheduler (bootstrap RBAC), and node certs
CN=system:node:<name>, O=system:nodes minted on demand (Node authorizer + NodeRestriction judge them).

ECDSA P-256 keys: generating one takes well under a millisecond (RSA-2048 takes ~50ms), and the
API server accepts ECDSA for serving, client and service-account keys.
"""
from __future__ import annotations

import datetime as _dt
import ipaddress
import os
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Group every controller identity's cert carries; the local backend binds it to cluster-admin
# (an RBAC grant, not system:masters, so controllers go through authorization like real ones).
CONTROLLERS_GROUP = "harness:controllers"

# envtest's tinyca uses 7 days too (sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/certs/tinyca.go
# TinyCA.makeCert; sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/controlplane/apiserver.go
# APIServer.defaultArgs)
_VALIDITY = _dt.timedelta(days=7)


@dataclass(frozen=True)
class CertPair:
    cert: Path
    key: Path

    def as_tuple(self) -> tuple[str, str]:
        return str(self.cert), str(self.key)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(cn: str, orgs: tuple[str, ...] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    # a kubelet's CN is system:node:<node name>, up to 12 + 63 characters: RFC 5280's ub-common-name (64), which
    # cryptography checks by default, is bound by neither the kubelet's nor kube-apiserver's Go crypto/x509, and an
    # AKS machine's node name reaches 63 (provider v1.14.0 aksmachineinstanceutils.go GetAKSMachineNameFromNodeClaimName)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # its length warning, for the same bound
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn, _validate=False))
    return x509.Name(attrs)


def _write(path: Path, data: bytes, private: bool = False) -> None:
    path.write_bytes(data)
    if private:
        os.chmod(path, 0o600)


class PKI:
    """All key material of one cluster, written as PEM files under `directory`.

    `ca`, `serving`, `sa_key`/`sa_pub` exist after construction; `client(cn, orgs)` mints (and caches)
    a client cert, so node identities can be created lazily, one per simulated kubelet.
    """

    def __init__(self, directory: str | os.PathLike, *, ca: tuple[bytes, bytes] | None = None,
                 server_side: bool = True):
        """`ca=(cert_pem, key_pem)` reuses an existing client CA (e.g. k3s's, to mint node certs for
        a cluster we did not create); `server_side=False` skips the serving cert and SA keys."""
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._clients: dict[tuple[str, tuple[str, ...]], CertPair] = {}
        now = _dt.datetime.now(_dt.timezone.utc)
        self._not_before = now - _dt.timedelta(minutes=5)
        self._not_after = now + _VALIDITY

        if ca is not None:
            self._ca_cert = x509.load_pem_x509_certificate(ca[0])
            self._ca_key = serialization.load_pem_private_key(ca[1], password=None)
            self._not_after = min(self._not_after, self._ca_cert.not_valid_after_utc)
        else:
            # Cluster CA (https://kubernetes.io/docs/setup/best-practices/certificates/).
            self._ca_key = _key()
            name = _name("harness-cluster-ca")
            self._ca_cert = (
                x509.CertificateBuilder().subject_name(name).issuer_name(name)
                .public_key(self._ca_key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(self._not_before).not_valid_after(self._not_after)
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False,
                                             encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(self._ca_key.public_key()),
                               critical=False)
                .sign(self._ca_key, hashes.SHA256())
            )
        self.ca = CertPair(self.dir / "ca.crt", self.dir / "ca.key")
        _write(self.ca.cert, self._ca_cert.public_bytes(serialization.Encoding.PEM))
        _write(self.ca.key, _key_pem(self._ca_key), private=True)
        if not server_side:
            return

        # Serving cert: SANs of loopback plus the in-cluster service names
        # (https://kubernetes.io/docs/setup/best-practices/certificates/).
        dns = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
               "kubernetes.default.svc.cluster.local"]
        ips = ["127.0.0.1", "10.0.0.1"]
        sans = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        self.serving = self._issue("kube-apiserver", (), self.dir / "apiserver",
                                   server=True, sans=sans)

        # Service-account signing key pair (--service-account-key-file / -signing-key-file,
        # https://kubernetes.io/docs/reference/command-line-tools-reference/kube-apiserver/;
        # sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/controlplane/apiserver.go
        # APIServer.defaultArgs).
        sa = _key()
        self.sa_key = self.dir / "sa.key"
        self.sa_pub = self.dir / "sa.pub"
        _write(self.sa_key, _key_pem(sa), private=True)
        _write(self.sa_pub, sa.public_key().public_bytes(serialization.Encoding.PEM,
                                                         serialization.PublicFormat.SubjectPublicKeyInfo))

    # -- issuing ----------------------------------------------------------------------------------
    def _issue(self, cn: str, orgs: tuple[str, ...], stem: Path, *, server: bool = False,
               sans: list[x509.GeneralName] | None = None) -> CertPair:
        key = _key()
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        b = (
            x509.CertificateBuilder().subject_name(_name(cn, orgs)).issuer_name(self._ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(self._not_before).not_valid_after(self._not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=False,
                                         crl_sign=False, content_commitment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._ca_key.public_key()),
                           critical=False)
        )
        if sans:
            b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = b.sign(self._ca_key, hashes.SHA256())
        pair = CertPair(stem.with_suffix(".crt"), stem.with_suffix(".key"))
        _write(pair.cert, cert.public_bytes(serialization.Encoding.PEM))
        _write(pair.key, _key_pem(key), private=True)
        return pair

    def client(self, cn: str, orgs: tuple[str, ...] = ()) -> CertPair:
        """A client cert for user `cn` in groups `orgs` (minted once, then reused)."""
        k = (cn, tuple(orgs))
        with self._lock:
            pair = self._clients.get(k)
            if pair is None:
                safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in cn)
                stem = self.dir / f"client-{safe}-{len(self._clients)}"
                pair = self._issue(cn, tuple(orgs), stem)
                self._clients[k] = pair
            return pair

    # Identities (https://kubernetes.io/docs/setup/best-practices/certificates/;
    # https://kubernetes.io/docs/reference/access-authn-authz/node/)
    def admin(self) -> CertPair:
        return self.client("admin", ("system:masters",))

    def controller(self, username: str) -> CertPair:
        return self.client(username, (CONTROLLERS_GROUP,))

    def node(self, node_name: str) -> CertPair:
        """CN=system:node:<name>, O=system:nodes: only the Node authorizer grants it anything."""
        return self.client(f"system:node:{node_name}", ("system:nodes",))

    def kube_scheduler(self) -> CertPair:
        return self.client("system:kube-scheduler")

    def kube_controller_manager(self) -> CertPair:
        return self.client("system:kube-controller-manager")


def kubeconfig(server: str, ca: Path, pair: CertPair) -> dict:
    """A kubeconfig dict (file paths, not inline data) for one client identity."""
    name = "harness"
    return {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": name, "user": {"client-certificate": str(pair.cert), "client-key": str(pair.key)}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    }
