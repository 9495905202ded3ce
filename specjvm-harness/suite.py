"""The workloads: what each one runs, the jars it needs, its full and quick sizes, and how to build them.

A workload is a Java program in java/nativeacct/harness (or the JRuby script in ruby/) run in a fresh JVM.
It prints only deterministic results on stdout and one `nativeacct-harness: ... work_ns=N` line on stderr.
SPECjvm2008 / SPECjvm98 benchmarks, when the user has an install, become workloads of the same shape.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

HARNESS_DIR = Path(__file__).resolve().parent
REPO_ROOT = HARNESS_DIR.parent
JAVA_SRC = HARNESS_DIR / "java"
PACKAGE_DIR = JAVA_SRC / "nativeacct" / "harness"
RUBY_SCRIPT = HARNESS_DIR / "ruby" / "workload.rb"

SHARE_JAVA = Path("/usr/share/java")
JRUBY_HOME = Path("/usr/share/jruby")

# Sources every workload class depends on.
COMMON_SOURCES = ["Common.java", "Sql.java"]


@dataclasses.dataclass
class Workload:
    name: str
    description: str
    # Debian packages that provide what it needs (scripts/install-workloads installs them).
    packages: list[str]
    # Files that must exist for it to run (jars, native libraries).
    requires: list[Path]
    full_size: int
    quick_size: int
    # Java sources (in PACKAGE_DIR) and main class, for the Java workloads.
    sources: list[str] = dataclasses.field(default_factory=list)
    main_class: str | None = None
    classpath: list[Path] = dataclasses.field(default_factory=list)
    extra_args: list[str] = dataclasses.field(default_factory=list)
    # Replaces extra_args in --quick runs when set.
    quick_args: list[str] | None = None
    threads: int = 1
    # Whether stdout must be identical across configurations (false for SPEC, which prints timings).
    deterministic_stdout: bool = True
    # Included in the geometric means (false for the start-up probe).
    in_geomean: bool = True
    # Full command builder for workloads that are not a plain `java -cp ... Main --size N`.
    command: object = None
    cwd: Path | None = None
    size_unit: str = ""

    def missing(self) -> list[Path]:
        return [p for p in self.requires if not p.exists()]


def jar(name: str) -> Path:
    return SHARE_JAVA / name


def jruby_command(jvm: list[str], agent: list[str], size: int) -> list[str]:
    """The java command line Debian's /usr/bin/jruby would run, with our agent and options inserted."""
    lib = JRUBY_HOME / "lib"
    classpath = ":".join(
        str(lib / j)
        for j in ["bcpkix.jar", "bcprov.jar", "bctls.jar", "bcutil.jar", "jansi1.jar", "jline2.jar", "snakeyaml.jar"]
    )
    return [
        *jvm,
        *agent,
        f"@{JRUBY_HOME / 'bin' / '.jruby.module_opts'}",
        "-Xss2048k",
        f"-Djffi.boot.library.path={lib / 'jni'}",
        "-Djava.security.egd=file:/dev/urandom",
        "--module-path",
        str(lib / "jruby.jar"),
        "-classpath",
        classpath,
        f"-Djruby.home={JRUBY_HOME}",
        f"-Djruby.lib={lib}",
        "-Djruby.script=jruby",
        "-Djruby.shell=/bin/sh",
        "org.jruby.Main",
        str(RUBY_SCRIPT),
        str(size),
    ]


def java_workload(name: str, main: str, description: str, packages: Sequence[str] = (), jars: Sequence[Path] = (),
                  native_libs: Sequence[Path] = (), **options) -> Workload:
    """A workload that runs nativeacct.harness.<main> (from <main>.java) with `jars` on its class path; it
    requires those jars and `native_libs`, which the Debian `packages` provide."""
    return Workload(
        name=name, description=description, packages=list(packages), requires=[*jars, *native_libs],
        sources=[f"{main}.java"],
        main_class=f"nativeacct.harness.{main}", classpath=list(jars), **options,
    )


def builtin_workloads() -> list[Workload]:
    compress_jar = jar("commons-compress.jar")
    h2_jar = jar("h2.jar")
    derby_jar = jar("derby.jar")
    lz4_jar = jar("lz4-java.jar")
    lz4_jni = Path("/usr/lib/x86_64-linux-gnu/jni/liblz4-java.so")
    saxon_jar = jar("Saxon-HE.jar")
    xerces_jar = jar("xercesImpl.jar")
    return [
        java_workload(
            "startup",
            "Startup",
            "empty main: the fixed cost of starting the JVM in each configuration",
            full_size=0,
            quick_size=0,
            in_geomean=False,
        ),
        java_workload(
            "compress",
            "Compress",
            "bzip2 (commons-compress, Java) and deflate/gzip/zip (java.util.zip, JNI zlib) round trips",
            packages=["libcommons-compress-java"],
            jars=[compress_jar],
            full_size=8192,
            quick_size=384,
            size_unit="KiB corpus",
        ),
        java_workload(
            "db",
            "Db",
            "H2 in-memory SQL: bulk load, joins, aggregates, OLTP transaction mix",
            packages=["libh2-java"],
            jars=[h2_jar],
            full_size=8000,
            quick_size=600,
            size_unit="customers",
        ),
        java_workload(
            "derby",
            "Derby",
            "Apache Derby embedded (in-memory), the same SQL workload as db",
            packages=["libderby-java"],
            jars=[derby_jar],
            full_size=3000,
            quick_size=100,
            size_unit="customers",
        ),
        java_workload(
            "javac",
            "Javac",
            "javac in process: the harness's own sources plus generated classes, 3 rounds (quick: 1)",
            full_size=40,
            quick_size=5,
            size_unit="generated classes",
            extra_args=["--rounds", "3"],
            quick_args=["--rounds", "1"],
            # --sources / --classpath are added by the runner, which knows what was built.
        ),
        java_workload(
            "xml",
            "Xml",
            "Saxon-HE XSLT 2.0 transform (grouping, sorting) and Xerces SAX parse of a generated document, 3 rounds (quick: 1)",
            packages=["libsaxonhe-java", "libxerces2-java"],
            jars=[saxon_jar, xerces_jar],
            full_size=30000,
            quick_size=1000,
            size_unit="orders",
            extra_args=["--rounds", "3"],
            quick_args=["--rounds", "1"],
        ),
        java_workload(
            "lz4",
            "Lz4",
            "lz4-java JNI codec (Debian liblz4-jni): 256 B-16 KiB blocks compress/decompress + native xxhash64, frame streams, 60 passes (quick: 24)",
            packages=["liblz4-java", "liblz4-jni"],
            jars=[lz4_jar],
            native_libs=[lz4_jni],
            full_size=8192,
            quick_size=512,
            size_unit="KiB corpus",
            extra_args=["--passes", "60"],
            quick_args=["--passes", "24"],
        ),
        java_workload(
            "parallel",
            "Parallel",
            "4 threads: SHA-256, AES/CTR, deflate, temp-file write/read, shared word counts",
            full_size=120,
            quick_size=8,
            size_unit="256 KiB jobs",
            extra_args=["--threads", "4"],
            threads=4,
        ),
        Workload(
            name="jruby",
            description="a Ruby program on JRuby: text stats, regexps, JSON, floating point, files via jnr-posix",
            packages=["jruby"],
            requires=[JRUBY_HOME / "lib" / "jruby.jar", RUBY_SCRIPT],
            full_size=900,
            quick_size=20,
            size_unit="paragraphs",
            command=jruby_command,
        ),
    ]


def all_packages() -> list[str]:
    seen: list[str] = []
    for w in builtin_workloads():
        for p in w.packages:
            if p not in seen:
                seen.append(p)
    return seen


# --- SPEC ---------------------------------------------------------------------------------------------

SPECJVM2008_DEFAULT = [
    "compress", "crypto.aes", "crypto.rsa", "crypto.signverify", "derby", "mpegaudio",
    "scimark.fft.small", "scimark.lu.small", "scimark.monte_carlo", "scimark.sor.small",
    "scimark.sparse.small", "serial", "sunflow", "xml.transform", "xml.validation",
]  # compiler.* needs the JDK 6-era javac the kit bundles; add it with --spec-benchmarks if it works for you.
SPECJVM98_DEFAULT = ["_201_compress", "_202_jess", "_209_db", "_213_javac", "_222_mpegaudio", "_227_mtrt", "_228_jack"]


def spec_workloads(path: Path, benchmarks: list[str] | None, ops: int | None) -> list[Workload]:
    """Workloads for a user's SPECjvm2008 or SPECjvm98 install. Nothing of SPEC is bundled here."""
    path = path.resolve()
    if (path / "SPECjvm2008.jar").exists():
        names = benchmarks or SPECJVM2008_DEFAULT

        def spec2008(bench: str):
            def command(jvm: list[str], agent: list[str], size: int) -> list[str]:
                # Fixed work (-ops) rather than fixed time, one iteration, no warm-up, no report files.
                return [
                    *jvm, *agent, "-jar", str(path / "SPECjvm2008.jar"), "-ikv", "-ict", "-crf", "false",
                    "-ctf", "false", "-chf", "false", "-wt", "0", "-i", "1", "-ops", str(size), bench,
                ]

            return command

        return [
            Workload(
                name=f"spec2008:{b}", description=f"SPECjvm2008 {b} (-ops fixed work)", packages=[], requires=[],
                full_size=ops or 5, quick_size=1, size_unit="ops", command=spec2008(b), cwd=path,
                deterministic_stdout=False,
            )
            for b in names
        ]
    if (path / "SpecApplication.class").exists():
        names = benchmarks or SPECJVM98_DEFAULT

        def spec98(bench: str):
            def command(jvm: list[str], agent: list[str], size: int) -> list[str]:
                return [*jvm, *agent, "-cp", str(path), "SpecApplication", f"-s{size}", "-m1", "-M1", bench]

            return command

        return [
            Workload(
                name=f"spec98:{b}", description=f"SPECjvm98 {b}", packages=[], requires=[],
                full_size=100, quick_size=10, size_unit="-s", command=spec98(b), cwd=path,
                deterministic_stdout=False,
            )
            for b in names
        ]
    raise SystemExit(
        f"harness: --spec {path}: no SPECjvm2008.jar or SpecApplication.class there "
        "(give the directory of an installed SPECjvm2008 or SPECjvm98)"
    )


# --- building the Java workloads -------------------------------------------------------------------------


@dataclasses.dataclass
class Build:
    classes: Path
    sources: list[Path]
    classpath: list[Path]


def build_java(workloads: list[Workload], out_dir: Path, javac: str) -> Build:
    """Compiles the sources of the given Java workloads into out_dir/classes, only when something changed.

    The caller passes every built-in workload whose packages are installed, whatever --only says, so the
    javac workload (which compiles these same sources) always has the same input on a given machine.
    """
    names = list(COMMON_SOURCES)
    classpath: list[Path] = []
    for w in workloads:
        for s in w.sources:
            if s not in names:
                names.append(s)
        for c in w.classpath:
            if c not in classpath:
                classpath.append(c)
    sources = [PACKAGE_DIR / n for n in names]
    classes = out_dir / "classes"
    stamp = out_dir / "classes.stamp"
    key = "\n".join([javac, *map(str, sources), *map(str, classpath)])
    newest = max(s.stat().st_mtime for s in sources)
    if stamp.exists() and stamp.read_text() == key and stamp.stat().st_mtime >= newest:
        return Build(classes, sources, classpath)
    # Build beside the old tree and swap, so a harness run already using the classes is not disturbed.
    fresh = out_dir / f"classes.building-{os.getpid()}"
    if fresh.exists():
        shutil.rmtree(fresh)
    fresh.mkdir(parents=True)
    cmd = [javac, "-d", str(fresh), "-encoding", "UTF-8", "-nowarn"]
    if classpath:
        cmd += ["-cp", ":".join(map(str, classpath))]
    cmd += [str(s) for s in sources]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(fresh, ignore_errors=True)
        raise SystemExit(f"harness: javac failed building the workloads:\n{result.stdout}{result.stderr}")
    if classes.exists():
        stale = out_dir / f"classes.stale-{os.getpid()}"
        classes.rename(stale)
        shutil.rmtree(stale, ignore_errors=True)
    fresh.rename(classes)
    stamp.write_text(key)
    os.utime(stamp)
    return Build(classes, sources, classpath)


def java_command(w: Workload, build: Build, jvm: list[str], agent: list[str], size: int, quick: bool) -> list[str]:
    if w.command is not None:
        return w.command(jvm, agent, size)
    cp = [build.classes, *w.classpath]
    extra = w.quick_args if (quick and w.quick_args is not None) else w.extra_args
    args = ["--size", str(size), *extra]
    if w.name == "javac":
        args += [
            "--sources", ":".join(str(s) for s in build.sources),
            "--classpath", ":".join(str(c) for c in build.classpath),
        ]
    return [*jvm, *agent, "-cp", ":".join(map(str, cp)), w.main_class, *args]
