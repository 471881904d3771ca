"""nginx in front of a few app servers on this machine, from the shipped site
(``deploy/nginx/context-lab.conf``) with its servers, ports, certificate and log paths
rewritten, so that what ``deploy/cluster.py`` and the tests run is the file an
administrator installs.

``site_config`` rewrites the site; ``Nginx`` wraps it in a complete ``nginx.conf`` in a
run folder (logs, pid file, temporary folders all there) and runs
``nginx -p RUNDIR -c nginx.conf -g 'daemon off; pid RUNDIR/nginx.pid;'`` in the
foreground of a child process.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SITE = Path(__file__).resolve().parent / "nginx" / "context-lab.conf"
NGINX = Path(os.environ.get("LAB_NGINX", "/usr/sbin/nginx"))


def nginx_missing() -> str | None:
    """Why nginx cannot be run here, or None."""
    if not NGINX.exists():
        return f"nginx not found at {NGINX}; install Debian's nginx package (or set LAB_NGINX)"
    return None


@dataclass(frozen=True)
class Tls:
    """A certificate and its key (PEM files), and the plain-HTTP port that redirects to
    HTTPS (0: none)."""

    cert: Path
    key: Path
    redirect_port: int = 0


def _server_blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) of each top-level ``server { ... }`` block of ``text``."""
    blocks = []
    for m in re.finditer(r"^server \{\n", text, flags=re.M):
        end = text.index("\n}\n", m.start()) + 3
        blocks.append((m.start(), end))
    return blocks


def site_config(upstreams: list[str], port: int, host: str = "127.0.0.1", tls: Tls | None = None,
                log_dir: Path | None = None, site: str | None = None) -> str:
    """The shipped site for the app servers ``upstreams`` ("127.0.0.1:8501", ...), on
    ``host:port``: HTTPS with ``tls`` (and the redirect from ``tls.redirect_port`` where
    given), else plain HTTP (the shipped file's comment says how, and this does just
    that). Logs go to ``log_dir`` when given."""
    text = site if site is not None else SITE.read_text()
    if not upstreams:
        raise ValueError("no app servers to put behind nginx")
    servers = "".join(f"    server {u} max_fails=1 fail_timeout=10s;\n" for u in upstreams)
    text, n = re.subn(r"(?m)^    server \S+ max_fails=.*;\n(?:    server \S+ max_fails=.*;\n)*", servers, text)
    assert n == 1, "the site's upstream servers are not where deploy/nginx.py looks for them"
    (redirect_start, redirect_end), (main_start, main_end) = _server_blocks(text)
    redirect, main = text[redirect_start:redirect_end], text[main_start:main_end]
    if tls is None:
        main = main.replace("listen 443 ssl;", f"listen {host}:{port};")
        main = re.sub(r"(?m)^    ssl_\w+ .*\n", "", main)
        redirect = ""
    else:
        main = main.replace("listen 443 ssl;", f"listen {host}:{port} ssl;")
        main = re.sub(r"(?m)^(    ssl_certificate) .*;", rf"\1 {tls.cert};", main)
        main = re.sub(r"(?m)^(    ssl_certificate_key) .*;", rf"\1 {tls.key};", main)
        if tls.redirect_port:
            redirect = redirect.replace("listen 80;", f"listen {host}:{tls.redirect_port};")
            redirect = redirect.replace("https://$host$request_uri", f"https://$host:{port}$request_uri")
        else:
            redirect = ""
    text = text[:redirect_start] + redirect + text[redirect_end:main_start] + main + text[main_end:]
    if log_dir is not None:
        text = text.replace("/var/log/nginx/", f"{log_dir}/")
    return re.sub(r"\n{3,}", "\n\n", text)


def main_config(site: str, run_dir: Path) -> str:
    """A complete nginx.conf around ``site`` whose every file lies in ``run_dir``."""
    temp = "\n".join(f"    {kind}_temp_path {run_dir}/temp/{kind};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    indented = "".join(f"    {line}\n" if line else "\n" for line in site.splitlines())
    return (f"worker_processes 1;\nerror_log {run_dir}/error.log;\n"
            f"events {{\n    worker_connections 1024;\n}}\n"
            f"http {{\n{temp}\n    access_log off;\n\n{indented}}}\n")


def _port_answers(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


@dataclass
class Nginx:
    """nginx on ``host:port`` in front of ``upstreams``, its files in ``run_dir``:
    ``start()``, ``stop()``, ``access_log()`` (the lines so far)."""

    upstreams: list[str]
    port: int
    run_dir: Path
    host: str = "127.0.0.1"
    tls: Tls | None = None
    proc: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def access_log_path(self) -> Path:
        return self.run_dir / "context-lab.access.log"

    def write_config(self) -> Path:
        (self.run_dir / "temp").mkdir(parents=True, exist_ok=True)
        site = site_config(self.upstreams, self.port, self.host, self.tls, log_dir=self.run_dir)
        path = self.run_dir / "nginx.conf"
        path.write_text(main_config(site, self.run_dir))
        return path

    def command(self) -> list[str]:
        return [str(NGINX), "-p", str(self.run_dir), "-c", str(self.run_dir / "nginx.conf"),
                "-g", f"daemon off; pid {self.run_dir}/nginx.pid;"]

    def start(self, timeout: float = 10) -> Nginx:
        self.write_config()
        test = subprocess.run([*self.command()[:5], "-t", "-g", f"pid {self.run_dir}/nginx.pid;"],
                              capture_output=True, text=True)
        if test.returncode:
            raise RuntimeError(f"nginx refused its configuration ({self.run_dir / 'nginx.conf'}):\n{test.stderr}")
        with open(self.run_dir / "nginx.out", "w") as out:
            self.proc = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        ports = [self.port] + ([self.tls.redirect_port] if self.tls and self.tls.redirect_port else [])
        while not all(_port_answers(self.host, p) for p in ports):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                errors = self.run_dir / "error.log"
                log = errors.read_text(errors="replace") if errors.exists() else ""
                raise RuntimeError(f"nginx did not start on {self.host}:{self.port}:\n{log[-2000:]}")
            time.sleep(0.05)
        return self

    def stop(self, timeout: float = 10) -> None:
        """Shut down at once (SIGTERM: a graceful SIGQUIT would wait for every open
        websocket to close); SIGKILL after ``timeout``."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def reload(self) -> None:
        """Re-read the configuration (SIGHUP): new workers, which have forgotten the servers
        that refused them, take the new connections; the old ones finish what they serve."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGHUP)

    def access_log(self) -> list[str]:
        path = self.access_log_path
        return path.read_text(errors="replace").splitlines() if path.exists() else []

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def openssl_missing() -> str | None:
    return None if shutil.which("openssl") else "openssl not found; install Debian's openssl package"


def self_signed(folder: Path, name: str = "127.0.0.1") -> tuple[Path, Path]:
    """A self-signed certificate for the IP address ``name`` (and its key) in ``folder``."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=IP:{name}"], check=True, capture_output=True)
    return cert, key
