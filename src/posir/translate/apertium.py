"""Apertium (Debian's rule-based MT) in null-flush batches, offline.

``apertium -u eng-spa`` starts a pipeline of about a dozen programs per call
(0.27 s per text here), too slow for thousands of paragraphs. Every stage of
the pipeline accepts ``-z`` (null flush): texts separated by ``\\0`` go through
one pipeline and come out separated by ``\\0``. The ``apertium`` wrapper's txt
deformatter drops ``\\0``, so this module does the deformatting itself
(:func:`deformat`, equal to ``apertium-destxt`` output, checked by the tests),
runs the pair's mode in null-flush form (``apertium-wblank-mode -z``) and
reformats (:func:`reformat`, as ``apertium-retxt``). A text that is first in
its batch comes out exactly as from ``apertium -u``.

One difference remains and is documented rather than hidden: apertium's HMM
tagger carries some state across null-flushed segments, so in a batch a few
words of a later text may be tagged differently from a lone call (a past
participle for a preterite, e.g. "acabado"/"acabó"). Batches are fixed by the
input order and a fixed size, the on-disk cache (:mod:`posir.translate.cache`)
freezes each text's first translation, and the variants of one language pair
translate one after the other in a fixed order
(:meth:`posir.plan.benchmarks.BenchmarkPlan.apertium_translated_before`), so
a clean run is reproducible whatever the schedule.

Install: ``apt-get install apertium-eng-spa`` (Debian/Ubuntu; other pairs:
``apt-cache search apertium-``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger("posir.translate")

DEFAULT_DATADIR = Path("/usr/share/apertium")
INSTALL_HINT = (
    "install it with 'apt-get install apertium-{pair}' (Debian/Ubuntu; 'apt-cache search apertium-' lists pairs)"
)

# Characters apertium's stream format reserves; the txt deformatter backslash-escapes them.
_RESERVED = frozenset("[]^$/\\@<>{}")
# The txt deformatter's blank characters: ASCII whitespace, and '~' (a format character to apertium).
_BLANK = re.compile(r"[ \t\n\r\f\v~]+")


class ApertiumError(RuntimeError):
    """Apertium or the language pair is missing, or the pipeline failed."""


def _escape(text: str) -> str:
    return "".join("\\" + c if c in _RESERVED else c for c in text)


def deformat(text: str) -> str:
    """Stream format of ``text`` exactly as ``apertium-destxt`` writes it.

    Blanks other than a single space become superblanks ``[...]``; a blank
    holding an empty line, and the end of the text, get a sentence end ``.[]``
    inserted before them (the tagger and transfer need sentence boundaries;
    :func:`reformat` removes it again).
    """
    out: list[str] = []
    cursor = 0
    blanks = list(_BLANK.finditer(text))
    for _index, match in enumerate(blanks):
        out.append(_escape(text[cursor : match.start()]))
        blank = match.group()
        final = match.end() == len(text)
        if final:
            out.append(".[]")
        elif "\n\n" in blank and match.start() > 0:
            out.append(".[]")
        out.append(blank if blank == " " else f"[{blank}]")
        cursor = match.end()
    out.append(_escape(text[cursor:]))
    if not blanks or blanks[-1].end() != len(text):
        out.append(".[]")
    return "".join(out)


def reformat(stream: str) -> str:
    """Text of an apertium output stream, as ``apertium-retxt``: inserted ``.[]`` removed, escapes undone."""
    out: list[str] = []
    i, n = 0, len(stream)
    while i < n:
        c = stream[i]
        if c == "\\" and i + 1 < n:
            out.append(stream[i + 1])
            i += 2
        elif c == "." and stream.startswith(".[]", i):
            i += 3
        elif c == "[":
            j = i + 1
            while j < n and stream[j] != "]":
                if stream[j] == "\\" and j + 1 < n:
                    out.append(stream[j + 1])
                    j += 2
                    continue
                out.append(stream[j])
                j += 1
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class Apertium:
    """One language pair (``eng-spa``) of an installed apertium, run in null-flush batches."""

    pair: str
    datadir: Path = DEFAULT_DATADIR
    timeout: float = 3600.0

    @property
    def mode_file(self) -> Path:
        return Path(self.datadir) / "modes" / f"{self.pair}.mode"

    def check(self) -> None:
        """Raise :class:`ApertiumError` saying how to install what is missing."""
        for program in ("apertium-wblank-mode", "lt-proc", "apertium-tagger"):
            if shutil.which(program) is None:
                raise ApertiumError(
                    f"'{program}' is not on PATH: apertium is not installed; " + INSTALL_HINT.format(pair=self.pair)
                )
        if not self.mode_file.is_file():
            modes = sorted(p.stem for p in (Path(self.datadir) / "modes").glob("*.mode"))
            raise ApertiumError(
                f"apertium has no language pair '{self.pair}' ({self.mode_file} is missing; "
                f"installed: {modes or 'none'}); " + INSTALL_HINT.format(pair=self.pair)
            )

    def identity(self) -> str:
        """Backend id for the cache: the pair and a sha256 of every data file its mode reads."""
        self.check()
        digest = hashlib.sha256(self.mode_file.read_bytes())
        for path in sorted(set(re.findall(r"'([^']+)'", self.mode_file.read_text(encoding="utf-8")))):
            if os.path.isfile(path):
                digest.update(Path(path).read_bytes())
        return f"apertium:{self.pair}:{digest.hexdigest()[:16]}"

    def _script(self) -> str:
        done = subprocess.run(["apertium-wblank-mode", "-z", str(self.mode_file)], capture_output=True, check=False)
        if done.returncode != 0 or not done.stdout.strip():
            raise ApertiumError(
                f"apertium-wblank-mode failed on {self.mode_file}: {done.stderr.decode(errors='replace')[:500]}"
            )
        return done.stdout.decode("utf-8")

    def translate_batch(self, texts: Sequence[str]) -> list[str]:
        """Translate ``texts`` through one null-flush pipeline (``-u``: no '*' marks on unknown words)."""
        if not texts:
            return []
        self.check()
        # '\0' separates texts in the stream; one inside a text would split it.
        payload = "\0".join(deformat(t.replace("\0", " ")) for t in texts) + "\0"
        env = {**os.environ, "LC_ALL": "C.UTF-8"}  # apertium refuses non-UTF-8 locales
        # $1 is the generator's option (-n: no unknown-word marks, as 'apertium -u'), $2 the tagger's (none).
        done = subprocess.run(
            ["bash", "-c", self._script(), "apertium-" + self.pair, "-n", ""],
            input=payload.encode("utf-8"),
            capture_output=True,
            env=env,
            timeout=self.timeout,
            check=False,
        )
        if done.returncode != 0:
            raise ApertiumError(
                f"apertium {self.pair} exited with {done.returncode}: {done.stderr.decode(errors='replace')[:500]}"
            )
        segments = done.stdout.decode("utf-8").split("\0")
        # Each stage answers the final flush with its own '\0', so empty segments trail the outputs.
        if len(segments) < len(texts) or any(s for s in segments[len(texts) :]):
            raise ApertiumError(
                f"apertium {self.pair} returned {sum(1 for s in segments if s)} non-empty segments "
                f"for {len(texts)} texts: the null-flush stream lost its alignment"
            )
        return [reformat(s) for s in segments[: len(texts)]]
