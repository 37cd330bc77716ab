"""web_fetch over https against a real TLS server here, with certificates made for the test by
openssl: the connection goes to the address that was checked while SNI and the certificate check
name the host; a certificate for another name, or from no trusted authority, is refused."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web_site import ALLOW_LOCALHOST, WebSite, fetch_context, web_fetch

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl program")
EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def openssl(folder: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=30)


def certificates(folder: Path, name: str) -> tuple[Path, Path, Path]:
    """A certificate authority and a server certificate it signed for `name`: (ca, cert, key)."""
    openssl(folder, "req", "-x509", *EC_KEY, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=mini-claude test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    openssl(folder, "req", *EC_KEY, "-keyout", "server.key", "-out", "server.csr", "-subj", f"/CN={name}")
    (folder / "server.ext").write_text(
        f"subjectAltName=DNS:{name}\nbasicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
        "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n"
    )
    openssl(folder, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext")  # fmt: skip
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


def tls_site(tmp_path: Path, name: str) -> tuple[WebSite, Path]:
    ca, cert, key = certificates(tmp_path, name)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return WebSite(tls=context), ca


@pytest.fixture
def secure(tmp_path: Path) -> Iterator[tuple[WebSite, Path]]:
    site, ca = tls_site(tmp_path, "localhost")
    yield site, ca
    site.close()


def test_https_checks_the_certificate_against_the_host(
    secure: tuple[WebSite, Path], project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, ca = secure
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # the system's trust store, as OpenSSL reads it
    site.serve("/doc", "<h1>Over TLS</h1>")
    ctx, _ = fetch_context(project_dir, ALLOW_LOCALHOST)
    result = web_fetch(ctx, site.url("/doc"))
    assert "# Over TLS" in result.content and result.content.startswith('<web-page url="https://localhost:')
    assert site.requests[0][1]["host"] == f"localhost:{site.port}"


def test_a_certificate_for_another_name_is_refused(
    tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, ca = tls_site(tmp_path, "elsewhere.test")
    try:
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        site.serve("/doc", "<h1>secret</h1>")
        ctx, _ = fetch_context(project_dir, ALLOW_LOCALHOST)
        result = web_fetch(ctx, site.url("/doc"))
        assert result.is_error and result.content.startswith(
            "The TLS certificate of localhost is not valid ("
        )
        assert "secret" not in result.content and site.requests == []
    finally:
        site.close()


def test_a_certificate_from_no_trusted_authority_is_refused(
    secure: tuple[WebSite, Path], project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, _ = secure
    empty = tmp_path / "no-authorities.pem"
    empty.write_text("")
    monkeypatch.setenv("SSL_CERT_FILE", str(empty))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "none"))
    site.serve("/doc", "<h1>secret</h1>")
    ctx, _ = fetch_context(project_dir, ALLOW_LOCALHOST)
    result = web_fetch(ctx, site.url("/doc"))
    assert result.is_error and "The TLS certificate of localhost is not valid" in result.content
    assert site.requests == []
