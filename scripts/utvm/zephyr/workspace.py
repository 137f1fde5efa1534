"""Whether a west workspace knows utvm, and what it lacks (``utvm info``).

West offers extension commands only from the manifest repository's ``self: west-commands``
and from projects that declare ``west-commands:`` (or are imported with ``import:``): a
workspace that lists utvm as an ordinary project builds the Zephyr module but has no
``west tvm``, and west then only says "unknown command". :func:`check` says what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The line a project entry of west.yml needs for `west tvm`.
WEST_COMMANDS_LINE = "west-commands: west-commands/west-commands.yml"


@dataclass(frozen=True)
class WorkspaceStatus:
    """What ``utvm info`` reports about the west workspace around a directory."""

    topdir: Path | None
    #: the manifest project that holds utvm, if any
    project: str | None
    west_tvm: bool
    zephyr: Path | None
    #: what to do, one sentence per problem
    advice: tuple[str, ...]


def _is_utvm(path: Path) -> bool:
    return (path / "west-commands" / "west-commands.yml").is_file() and (path / "zephyr" / "module.yml").is_file()


def check(start: Path | None = None) -> WorkspaceStatus:
    """The west workspace around ``start`` (default: the current directory)."""
    from west.manifest import MalformedManifest, Manifest, ManifestImportFailed
    from west.util import WestNotFound, west_topdir

    start = Path.cwd() if start is None else start
    try:
        topdir = Path(west_topdir(str(start)))
    except WestNotFound:
        return WorkspaceStatus(None, None, False, None, (
            "not in a west workspace: `west tvm` exists only in one whose west.yml lists utvm "
            f"(a project with `{WEST_COMMANDS_LINE}`, or utvm's own west.yml: west init -m <utvm url>)",))
    try:
        manifest = Manifest.from_topdir(topdir=str(topdir))
    except (ManifestImportFailed, MalformedManifest, OSError, ValueError) as e:
        return WorkspaceStatus(topdir, None, False, None, (
            f"west cannot load the manifest of {topdir} ({e}): run west update first",))
    project = None
    zephyr = None
    for p in manifest.projects:
        path = Path(p.abspath) if p.abspath else None
        if path is None:
            continue
        if p.name == "zephyr" or (path / "Kconfig.zephyr").is_file():
            zephyr = path
        if project is None and _is_utvm(path):
            project = p
    advice: list[str] = []
    if project is None:
        advice.append(f"{manifest.path} does not list utvm: add it to `projects:` with "
                      f"`{WEST_COMMANDS_LINE}` (README.md), then west update")
    elif not project.west_commands:
        advice.append(f"project {project.name} in {manifest.path} has no `{WEST_COMMANDS_LINE}` "
                      "line (or `import: true`): without it west has no `west tvm`")
    if zephyr is None:
        advice.append("no zephyr project in this workspace: `west tvm build` needs one (or ZEPHYR_BASE)")
    return WorkspaceStatus(topdir, project.name if project else None,
                           bool(project is not None and project.west_commands), zephyr, tuple(advice))
