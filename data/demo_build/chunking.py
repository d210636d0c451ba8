"""The two chunkings of the demo story.

v1 is the careless first attempt: fixed 512-character windows that cut wherever they fall.
v2 is the structural re-chunk: whole paragraphs packed up to a size target, never crossing a
section heading, each chunk carrying a header (title + section path) that is prepended to what
gets embedded and indexed, while the chunk's own text stays a verbatim slice of the document.
"""

from __future__ import annotations

from dataclasses import dataclass

from .source import Doc

V1_WINDOW = 512
V2_MAX_CHARS = 1200
V2_MIN_CHARS = 200
# Characters docutils' text writer uses to underline headings in pydoc_data.
UNDERLINE_CHARS = frozenset('*=-~^"+#')


@dataclass(frozen=True)
class Chunk:
    """A retrievable passage; start/end are character offsets into the parent's text."""

    chunk_id: str
    parent_id: str
    title: str
    text: str
    start: int
    end: int
    header: str | None = None

    def as_row(self) -> dict[str, object]:
        """The JSON-lines row (header only for v2)."""
        row: dict[str, object] = {
            "doc_id": self.chunk_id,
            "parent_id": self.parent_id,
            "title": self.title,
            "text": self.text,
            "start": self.start,
            "end": self.end,
        }
        if self.header is not None:
            row["header"] = self.header
        return row


def chunk_v1(doc: Doc, window: int = V1_WINDOW) -> list[Chunk]:
    """Blind fixed windows, no overlap, cut mid-word if that is where the window ends."""
    return [
        Chunk(
            f"{doc.doc_id}#v1-{k:03d}",
            doc.doc_id,
            doc.title,
            doc.text[s : s + window],
            s,
            min(s + window, len(doc.text)),
        )
        for k, s in enumerate(range(0, len(doc.text), window))
    ]


@dataclass(frozen=True)
class Block:
    """A run of non-blank lines; end excludes the final newline."""

    start: int
    end: int
    lines: tuple[str, ...]

    @property
    def indent(self) -> int:
        first = self.lines[0]
        return len(first) - len(first.lstrip(" "))


def split_blocks(text: str) -> list[Block]:
    """Split text into blank-line separated blocks, keeping exact offsets."""
    blocks: list[Block] = []
    cur: list[str] = []
    cur_start = pos = 0
    for line in text.split("\n"):
        if line.strip():
            if not cur:
                cur_start = pos
            cur.append(line)
        elif cur:
            blocks.append(Block(cur_start, pos - 1, tuple(cur)))
            cur = []
        pos += len(line) + 1
    if cur:
        blocks.append(Block(cur_start, cur_start + len("\n".join(cur)), tuple(cur)))
    return blocks


def heading_of(block: Block) -> tuple[str, str] | None:
    """(heading text, underline char) if the block is a heading line plus its underline."""
    if len(block.lines) != 2:
        return None
    line, under = block.lines
    if line.startswith(" ") or len(set(under)) != 1 or under[0] not in UNDERLINE_CHARS:
        return None
    if len(under) < len(line.rstrip()):
        return None
    return line.strip(), under[0]


def _units(blocks: list[Block]) -> list[tuple[int, int]]:
    """Paragraph units: a block ending in ':' followed by deeper-indented blocks (a code,
    grammar or example block, possibly with blank lines inside) yields the intro block and
    one unit spanning the whole indented run, so the indented run is never split."""
    units: list[tuple[int, int]] = []
    i = 0
    while i < len(blocks):
        b = blocks[i]
        units.append((b.start, b.end))
        i += 1
        if b.lines[-1].rstrip().endswith(":") and i < len(blocks) and blocks[i].indent > b.indent:
            first = blocks[i]
            while i + 1 < len(blocks) and blocks[i + 1].indent > b.indent:
                i += 1
            units.append((first.start, blocks[i].end))
            i += 1
    return units


def _pack(units: list[tuple[int, int]], max_chars: int, min_chars: int) -> list[tuple[int, int]]:
    """Greedy packing of whole units up to max_chars; a chunk still under min_chars absorbs
    the next unit even past max_chars (so a lone 'For example:' is not left dangling); a
    single unit longer than max_chars stays whole."""
    spans: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for s, e in units:
        if cur is None:
            cur = (s, e)
        elif e - cur[0] <= max_chars or cur[1] - cur[0] < min_chars:
            cur = (cur[0], e)
        else:
            spans.append(cur)
            cur = (s, e)
    if cur is not None:
        spans.append(cur)
    return spans


def sections(doc: Doc) -> list[tuple[list[str], list[Block]]]:
    """(section path below the title, content blocks) in document order.

    Heading levels follow docutils: the order in which underline characters first appear in
    the document ('*' for the title, then usually '=', '-', '~')."""
    levels: dict[str, int] = {}
    path: list[str] = []
    out: list[tuple[list[str], list[Block]]] = [([], [])]
    for block in split_blocks(doc.text):
        head = heading_of(block)
        if head is None:
            out[-1][1].append(block)
            continue
        text, char = head
        level = levels.setdefault(char, len(levels))
        if level == 0:
            if block.start != 0:
                raise ValueError(f"{doc.doc_id}: title-level heading inside the document: {text!r}")
            continue
        path = [*path[: level - 1], text]
        out.append((list(path), []))
    return [(p, bs) for p, bs in out if bs]


def chunk_v2(doc: Doc, max_chars: int = V2_MAX_CHARS, min_chars: int = V2_MIN_CHARS) -> list[Chunk]:
    """Structural chunks: whole paragraphs, never across a heading, with a section header."""
    chunks: list[Chunk] = []
    for path, blocks in sections(doc):
        header = " > ".join([doc.title, *path])
        for s, e in _pack(_units(blocks), max_chars, min_chars):
            k = len(chunks)
            chunks.append(
                Chunk(
                    f"{doc.doc_id}#v2-{k:03d}", doc.doc_id, doc.title, doc.text[s:e], s, e, header
                )
            )
    return chunks
