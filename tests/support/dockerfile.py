"""The repository's Dockerfile read as instructions, so that tests run its steps outside a
container (no container runs on the test machines): what the build stage copies, the
image's extras, environment, command and health check."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

DOCKERFILE = Path(__file__).resolve().parents[2] / "Dockerfile"


@dataclass(frozen=True)
class Stage:
    """One stage of a Dockerfile (``FROM`` to the next ``FROM``): its instructions, each as
    (keyword in upper case, its arguments with continued lines joined)."""

    instructions: tuple[tuple[str, str], ...]

    def arguments(self, keyword: str) -> list[str]:
        """The arguments of every ``keyword`` instruction of the stage, in order."""
        return [rest for found, rest in self.instructions if found == keyword]

    def copied(self) -> list[str]:
        """What the stage's ``COPY`` instructions take from the build context (the sources:
        every argument but the destination; copies from other stages left out)."""
        sources: list[str] = []
        for rest in self.arguments("COPY"):
            words = shlex.split(rest)
            if not any(word.startswith("--from=") for word in words):
                sources += words[:-1]
        return sources

    def arg_default(self, name: str) -> str:
        """The default value of ``ARG name=value``."""
        for rest in self.arguments("ARG"):
            key, _, value = rest.partition("=")
            if key.strip() == name:
                (unquoted,) = shlex.split(value) or [""]
                return unquoted
        raise KeyError(f"no ARG {name} in {DOCKERFILE}")

    def environment(self) -> dict[str, str]:
        """Every ``ENV key=value`` of the stage."""
        found: dict[str, str] = {}
        for rest in self.arguments("ENV"):
            for word in shlex.split(rest):
                key, equals, value = word.partition("=")
                assert equals, f"ENV {rest!r}: only key=value pairs are read here"
                found[key] = value
        return found

    def command(self) -> list[str]:
        """The ``CMD``, in its exec form (a JSON array)."""
        (rest,) = self.arguments("CMD")
        words = json.loads(rest)
        assert isinstance(words, list) and all(isinstance(word, str) for word in words), rest
        return words

    def health_check(self) -> str:
        """The shell command of ``HEALTHCHECK [options] CMD command``."""
        (rest,) = self.arguments("HEALTHCHECK")
        match = re.search(r"(?:^|\s)CMD\s+(.*)$", rest)
        assert match is not None, f"HEALTHCHECK {rest!r} has no CMD"
        return match.group(1)


def read_dockerfile(path: Path = DOCKERFILE) -> list[Stage]:
    """The stages of the Dockerfile at ``path``, in order."""
    lines: list[str] = []
    pending = ""
    for raw in path.read_text("utf-8").splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    stages: list[list[tuple[str, str]]] = []
    for line in lines:
        keyword, _, rest = line.partition(" ")
        if keyword.upper() == "FROM":
            stages.append([])
        assert stages, f"{path}: {line!r} before the first FROM"
        stages[-1].append((keyword.upper(), rest.strip()))
    return [Stage(tuple(stage)) for stage in stages]
