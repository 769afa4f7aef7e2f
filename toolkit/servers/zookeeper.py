"""ZooKeeper for the tests and the local cluster: a private standalone ZooKeeper."""

from __future__ import annotations

from pathlib import Path

from toolkit.servers.base import Availability, Server, exchange, find_program

# Debian's libzookeeper-java ships one jar whose manifest Class-Path names all
# of its dependencies (netty, jute, slf4j-api, ...), so it is the whole
# class path.  It brings no SLF4J binding, and without one ZooKeeper logs
# nothing at all: slf4j-simple (a dependency of the same package) writes its
# log to stderr, which ends up in server.log.
_ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
_SLF4J_SIMPLE_JAR = Path("/usr/share/java/slf4j-simple.jar")


class ZooKeeperServer(Server):
    """A private standalone ZooKeeper, run in the foreground by java.

    ``extra_args`` are extra JVM options (``-Dzookeeper.<setting>=...`` sets
    most ZooKeeper settings).
    """

    name = "ZooKeeper"
    signatures = ("QuorumPeerMain",)
    start_timeout = 60.0

    @classmethod
    def available(cls) -> Availability:
        if find_program("java") is None:
            return Availability(
                False, "java is not installed (Debian package: default-jre-headless)"
            )
        if not _ZOOKEEPER_JAR.is_file():
            return Availability(
                False,
                f"ZooKeeper is not installed (no {_ZOOKEEPER_JAR}; Debian package: zookeeper)",
            )
        return Availability(True)

    @property
    def config_path(self) -> Path:
        assert self.tmpdir is not None, "the server is not started"
        return self.tmpdir / "zoo.cfg"

    def _prepare(self) -> None:
        assert self.tmpdir is not None
        (self.tmpdir / "data").mkdir(exist_ok=True)

    def _configure(self) -> None:
        assert self.tmpdir is not None
        datadir = self.tmpdir / "data"
        self.config_path.write_text(
            "tickTime=2000\n"
            f"dataDir={datadir}\n"
            f"clientPort={self.port}\n"
            f"clientPortAddress={self.host}\n"
            "maxClientCnxns=0\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr\n"
        )

    def _command(self) -> list[str]:
        java = find_program("java")
        assert java is not None
        classpath = [_ZOOKEEPER_JAR]
        if _SLF4J_SIMPLE_JAR.is_file():
            classpath.append(_SLF4J_SIMPLE_JAR)
        return [
            java,
            # A small, quick-to-start JVM is plenty for tests.
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.net.preferIPv4Stack=true",
            "-Dzookeeper.forceSync=no",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
            *self.extra_args,
            "-cp", ":".join(str(jar) for jar in classpath),
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            str(self.config_path),
        ]  # fmt: skip

    def _is_ready(self) -> bool:
        # "ruok" only says that the process is up; "srvr" answers "This
        # ZooKeeper instance is not currently serving requests" until it is.
        if exchange(self.host, self.port, b"ruok") != b"imok":
            return False
        return b"Zookeeper version" in exchange(self.host, self.port, b"srvr")
