"""Identification of an unknown table: every family's reader proposes what it could be, over
a read-only View of it (families.proposals), and the one scorer below (Bench) scores each
proposal against the true values of the table it names. Bit-identical candidates come first,
then by largest error; among equals an exact convention, then a library, then a seed recipe.

A table of up to WHOLE_ELEMENTS elements is looked at whole. A larger one is narrowed on a
sample: families fit from its first FIT_ROWS rows, and candidates are scored on a few rows
spread over it (the first, the last, those at powers of two, and all-zero rows among the
first: padding rows); its seed and library variants are built only if no exact table matches
the sample; then the best are confirmed over the whole table in one streamed pass. A
candidate is bit-identical only after that pass.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..core.dtypes import host_float, match_margin
from ..core.errors import BadInput
from ..core.limits import available_memory
from ..core.names import few
from ..engine import build, memory_needed
from ..engine import rows as exact_rows
from ..families import FAMILIES, find_variant
from ..families.proposals import Note, Proposal, Scored, changed
from ..families.readers import READERS
from ..families.reading import digits
from ..spec import TableSpec, generate_command
from .metrics import LISTED, Difference, Tally
from .tables import Source, from_spec, runs

_RANK = {None: 0, "library": 1, "recipe": 2, "seed": 2}  # a library before a slip of it

WHOLE_ELEMENTS = 1 << 21  # tables up to this size are looked at whole
FIT_ROWS = 2048  # rows of a larger table the families fit from,
FIT_ELEMENTS = 1 << 20  # fewer where its rows are wide (at least 16)
SAMPLE_HEAD, SAMPLE_TAIL = 128, 16  # first and last rows of the sample
CONFIRMED = 4  # candidates confirmed over the whole table
WORST_ROWS = 8  # rows where a confirmed candidate differs most, added to its measured rows
HEAD_ROWS = 256  # rows of a variant checked before its whole table is built
KEPT = 4  # exact tables a view keeps, the most recent
_VARIANT_BUDGET = 1 << 31  # bytes a variant's whole table may take to be confirmed


@dataclass
class Candidate:
    """One thing the table could be, and the claim made of it. Its spec is the table it names;
    once identification is done, as the file holds it (its dtype, and its shape where the
    family writes that shape), so that the sentence printed, the --json spec and the generate
    command are all read from this one object."""

    name: str  # e.g. "fairseq (padding_idx=1)", "library whisper"
    spec: TableSpec
    difference: Difference
    source: str = ""  # for library variants: the function and version matched
    confirmed: bool = True  # bit-identity checked on every row (False: on the sample only)
    # how the named table is made from the spec's, where no generate command builds it alone
    # ("the transpose of"); empty where the spec's table is the named one
    composed: str = ""
    # where the table is not the named table's bits: rows and columns holding any such
    # element (the first LISTED + 1 of each, by index, over the rows checked)
    unequal_rows: list[int] = dataclasses.field(default_factory=list)
    unequal_columns: list[int] = dataclasses.field(default_factory=list)

    @property
    def rank(self) -> int:
        variant = find_variant(self.spec)
        return _RANK[variant.kind if variant is not None else None]

    @property
    def identical(self) -> bool:
        return self.confirmed and self.difference.identical

    @property
    def follows(self) -> bool:
        """A library variant whose arithmetic copies another library's (that one is named
        first where both make the table)."""
        variant = find_variant(self.spec)
        return variant is not None and bool(variant.follows)

    @property
    def identity(self) -> str:
        """The parameters that identify the named table, in one line."""
        return FAMILIES[self.spec.family].identity(self.spec)

    @property
    def command(self) -> str | None:
        """The generate command that builds the named table, byte for byte where the candidate
        is bit-identical; None where it is composed (`built_by` builds its part)."""
        return None if self.composed else generate_command(self.spec)

    @property
    def built_by(self) -> str:
        """The generate command that builds the spec's table (for a composed candidate, the
        table it is composed from)."""
        return generate_command(self.spec)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "spec": dataclasses.asdict(self.spec),
            "command": self.command,
            "composed": self.composed or None,
            "built_by": self.built_by,
            **self.difference.figures(),
            "confirmed": self.confirmed,
        }


def exact_reference(spec: TableSpec) -> np.ndarray:
    """The exact float64 table for a spec's family, convention, part, sizes, base and offset,
    seen as 2-D (rows, cols)."""
    return build(_exact(spec, "float64")).float64().reshape(spec.rows, spec.cols)


def _exact(spec: TableSpec, dtype: str) -> TableSpec:
    return spec.replace(variant="exact", dtype=dtype, compute_dtype=None, shape="2d", device="cpu")


class View:
    """What a reader sees of the table (families.proposals): its first rows `values` (every
    row, or the first FIT_ROWS of a sampled table), `length` rows of `cols` in all, the rows
    candidates are scored on (`rows`, their values `seen`), and read-only ways to look
    further: other rows, its blocks, an exact table at the rows scored."""

    def __init__(self, target: Source, values: np.ndarray, sampled: bool):
        self._target, self.values, self.sampled = target, values, sampled
        self.dtype, self.length, self.cols = target.dtype, target.rows, target.cols
        self._exact: dict[TableSpec, np.ndarray] = {}
        if sampled:
            powers = [
                p + k for p in (2 ** np.arange(int(np.log2(self.length)) + 1)) for k in (-1, 0)
            ]
            padding = np.flatnonzero(~values.any(axis=1)).tolist()  # candidate padding rows
            rows = {
                *range(SAMPLE_HEAD),
                *range(self.length - SAMPLE_TAIL, self.length),
                *powers,
                *padding,
            }
            self.rows = np.array(sorted(r for r in rows if 0 <= r < self.length))
            self.seen = target.at(self.rows)
        else:
            self.rows, self.seen = np.arange(self.length), values

    def head(self, rows: int) -> View:
        """A view of the table's first `rows` rows (a table with rows of padding after them)."""
        return View(self._target.shifted(0, rows), self.values[:rows], self.sampled)

    def at(self, rows) -> np.ndarray:
        """The table's rows at these indices, as float64: from its first rows where they hold
        them, else read from the table."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) and rows.max() < len(self.values):
            return self.values[rows]
        return self._target.at(rows)

    def blocks(self):
        """The whole table, in (first row, rows) blocks."""
        return self._target.blocks()

    def trailing_zero_rows(self) -> int:
        """How many of the table's last rows are all zeros, read from the end in blocks."""
        found, step = 0, 1
        while found < self.length:
            take = min(step, self.length - found, self._target.block_rows)
            stop = self.length - found
            zero = ~self._target.block(stop - take, stop).any(axis=1)
            if not zero.all():
                return found + int(np.argmin(zero[::-1]))
            found, step = found + take, step * 2
        return found

    def exact(self, spec: TableSpec) -> np.ndarray:
        """The exact float64 table of `spec` at the rows scored (a spec of another length than
        the table, such as a short one to choose a base by: every row). The last few are kept:
        a reader's look at a spec is followed by the scorer's."""
        key = _exact(spec, "float64")
        if key not in self._exact:
            if self.sampled and spec.rows == self.length:
                self._exact[key] = exact_at(key, self.rows)
            else:
                self._exact[key] = exact_reference(spec)
            while len(self._exact) > KEPT:  # each up to 16 MiB (WHOLE_ELEMENTS in float64)
                del self._exact[next(iter(self._exact))]
        return self._exact[key]

    @property
    def float32_numbers(self) -> bool:
        """Whether every value held of the table (its first rows and the rows scored) is a
        float32 number: float32 arithmetic kept in float64 (a torch table's .double()). The
        rest of a long table is checked by the confirming pass, which compares every value."""
        looked = np.concatenate([self.values.ravel(), self.seen.ravel()])
        return bool(np.array_equal(looked.astype(np.float32).astype(np.float64), looked))

    @staticmethod
    def spec(**params) -> TableSpec | None:
        """A spec, or None where these parameters make no table (a library that cannot): in
        float64 unless they say otherwise (a reading proposes its exact table; the scorer
        rounds it to the file's dtype)."""
        try:
            return TableSpec(**{"dtype": "float64", **params})
        except BadInput:
            return None

    def distance(self, spec: TableSpec) -> float:
        """The largest |difference| between the table and the exact table of `spec` at the
        rows scored (a reading's table is proposed only where it comes near)."""
        return float(np.max(np.abs(self.exact(spec) - self.seen)))

    @staticmethod
    def built(spec: TableSpec) -> np.ndarray:
        """A built table's values as 2-D float64."""
        return build(spec).float64().reshape(spec.rows, spec.cols)


class Bench:
    """The scorer: each proposal a reader yields (families.proposals) built, scored against
    the table at the view's rows and expanded into its family's library and seed variants,
    here and nowhere else. Its answer goes back to the reader."""

    def __init__(self, target: Source, view: View, threshold: float):
        self.target, self.view, self.threshold = target, view, threshold
        self.values, self.seen, self.rows = view.values, view.seen, view.rows
        self.dtype, self.length, self.sampled = view.dtype, view.length, view.sampled
        self.cols = view.cols
        self.deferred: list[tuple] = []  # a long table's variant candidates, tried last
        self.skipped = ""  # the note saying they were not built, said where they are not
        self.checked = 0  # candidates the confirming passes checked over every row

    def read(self, reader, notes: list[str]) -> list[Candidate]:
        """Run a reader to its end: its proposals scored (each answered), its notes kept once."""
        found, answer = [], None
        while True:
            try:
                item = reader.send(answer)
            except StopIteration:
                return found
            if isinstance(item, Note):
                if item.text not in notes:
                    notes.append(item.text)
                answer = None
            elif isinstance(item, Proposal):
                made, answer = self.score(item)
                found += made
            else:
                raise TypeError(f"a reader yielded {type(item).__name__}, not a Proposal or Note")

    def score(self, proposal: Proposal) -> tuple[list[Candidate], Scored | None]:
        """A proposal's candidates (it, and its family's library and seed variants that are
        the table) and the answer the reader gets; none for a spec that makes no table."""
        spec, made = proposal.spec, []
        if spec is None:
            return [], None
        against = proposal.against or spec
        if proposal.itself:
            made.append(
                self.candidate(
                    proposal.name + proposal.detail, spec, proposal.source, proposal.now, against
                )
            )
        if proposal.libraries and find_variant(spec) is None:
            made += self.variants(spec, proposal.detail, against, proposal.library_changes or {})
        made = [c for c in made if c is not None]
        if not made:
            return [], None
        own = made[0] if proposal.itself and made[0].spec == spec else None
        distance = (own or min(made, key=lambda c: c.difference.max_abs)).difference.max_abs
        named = any(c.difference.identical for c in made)
        return made, Scored(spec, distance, named)

    def _variant_at(self, spec: TableSpec):
        """A variant's table at the scored rows, and those rows (as a mask of self.rows): a long
        table's from its first rows where the family says they are the table's own (the rest
        waits for the confirming pass), else built whole where memory allows; None if neither."""
        if not self.sampled:
            if not self._head_agrees(spec):
                return None
            return View.built(spec), np.ones(len(self.rows), bool)
        shorter = _prefix(spec, len(self.values))
        if shorter is not None:
            keep = self.rows < shorter.rows
            return View.built(shorter)[self.rows[keep]], keep
        if memory_needed(spec, whole=True) > min(_VARIANT_BUDGET, available_memory() // 2):
            self.target.notes.append(
                f"{spec.variant} was not tried: its table is built whole, and that "
                "needs more memory than there is room for"
            )
            return None
        return View.built(spec)[self.rows], np.ones(len(self.rows), bool)

    def _head_agrees(self, spec: TableSpec) -> bool:
        """Whether a variant's first HEAD_ROWS rows are the table's, where the family can build
        them alone (a long table's variant is built whole only where they are)."""
        if self.length <= 2 * HEAD_ROWS:
            return True
        shorter = _prefix(spec, HEAD_ROWS)
        if shorter is None:
            return True
        unequal = View.built(shorter) != self.values[:HEAD_ROWS]
        columns = np.count_nonzero(unequal.any(axis=0))
        return not columns or _a_few(columns, self.cols, unequal.any(axis=1).sum(), HEAD_ROWS)

    def candidate(self, name, spec: TableSpec, source="", now=False, against=None):
        """The exact table of `spec` scored against the table (and whether it is bit-equal to
        its correctly rounded values); a variant only where it reproduces the table bit for
        bit, else None (on a long table's sample, tried after the exact candidates unless
        `now`); measured against the exact table of `against` (default: the spec's own)."""
        if spec.rows != self.length or spec.cols != self.target.cols:
            return None
        if find_variant(spec) is not None:
            if self.sampled and not now:  # tried after the exact candidates, if none is the table
                self.deferred.append((name, spec, source, against))
                return None
            return self.variant(name, spec, source, against)
        if self.sampled:
            rounded = exact_at(_exact(spec, self.dtype), self.rows)
        else:
            rounded = View.built(_exact(spec, self.dtype))
        return self._scored(name, spec, source, against, self.seen != rounded, self.rows)

    def variant(self, name, spec: TableSpec, source: str, against=None) -> Candidate | None:
        """A seed or library variant, where it reproduces the table at the scored rows."""
        found = self._variant_at(spec)
        if found is None:
            return None
        values, rows = found  # the variant's values at the scored rows it has, and those rows
        return self._scored(name, spec, source, against, values != self.seen[rows], self.rows[rows])

    def _scored(self, name, spec, source, against, unequal, rows) -> Candidate | None:
        """The candidate of `spec`, measured against the exact table of `against` (default:
        the spec's own), where its bits are not the table's at `rows` (`unequal`: a mask of
        them); a variant only where those are a few columns or rows (it is named where it is
        the table, but for a broken few), else None."""
        columns = np.flatnonzero(unequal.any(axis=0))
        lines = rows[np.flatnonzero(unequal.any(axis=1))]
        if find_variant(spec) is not None and len(columns):
            if not _a_few(len(columns), self.cols, len(lines), self.length):
                return None
        reference = self.view.exact(against or spec)  # (every row, where the table is whole)
        result = _measured(
            self.seen, reference, self.rows, self.length, self.dtype, spec.offset, self.threshold
        )
        result.differing = int(np.count_nonzero(unequal))
        found = Candidate(name, spec, result, source, confirmed=not self.sampled)
        found.unequal_rows, found.unequal_columns = _first(lines), _first(columns)
        return found

    def variants(self, spec, detail: str, against, changes: dict) -> list[Candidate | None]:
        """Each library variant of an exact spec's family that writes this table bit for bit
        (a float64 table: those whose arithmetic ends in float64, as complex128 tables; a half
        one: those that write it, as a cast of their float32 table or in their own half
        arithmetic), and each seed recipe computed in the table's dtype."""
        found = []
        for name, variant in FAMILIES[spec.family].variants.items():
            if variant.kind == "recipe" or spec.convention not in variant.conventions:
                continue
            if variant.kind == "seed":
                if self.dtype == "float64":
                    continue
                made = changed(spec, variant=name, compute_dtype=self.dtype, dtype=self.dtype)
                label = f"seed variant {name} in {self.dtype}"
            else:
                made = changed(spec, variant=name, dtype=self.dtype, **changes)
                if made is not None and self.dtype == "float64" and not variant.ends_float64(made):
                    continue
                label = f"library {name}{detail}"
            if made is not None:  # None: the variant cannot make this table
                found.append(self.candidate(label, made, variant.source, against=against))
        return found


def _prefix(spec: TableSpec, rows: int) -> TableSpec | None:
    """The spec of a table's first `rows` rows, where its family can build them alone."""
    try:
        return FAMILIES[spec.family].prefix(spec, rows)
    except BadInput:
        return None


def exact_at(spec: TableSpec, rows: np.ndarray) -> np.ndarray:
    """An exact spec's rows at `rows` (sorted), as float64."""
    return (
        host_float(exact_rows(spec, runs(rows)), spec.dtype)
        .astype(np.float64)
        .reshape(len(rows), spec.cols)
    )


def _measured(
    values, reference, rows, length: int, dtype: str, offset: int, threshold: float
) -> Difference:
    """A Difference over some rows of a table (position bands and positions where they are)."""
    tally = Tally(length, values.shape[1], dtype, offset, threshold)
    k = 0  # rows of `values` taken so far
    for start, stop in runs(rows):
        tally.add(start, values[k : k + stop - start], reference[k : k + stop - start])
        k += stop - start
    return tally.result()


def identify(target: Source, threshold: float) -> list[Candidate]:
    """Rank what every family says the table could be; an (L, D) table wider than long that
    no family explains is tried transposed. A long table's best candidates are confirmed over
    every row."""
    found, bench, said = _candidates(target, threshold)
    if bench is None:  # NaN or infinite values: no formula writes them
        return []
    transposed = False
    if not found and target.rows < target.cols:
        target.notes.append(f"{target.label} read as transposed ({target.cols}, {target.rows})")
        found, bench, said = _candidates(target.transposed(), threshold)
        transposed = True
    found += _deferred(bench, found)
    cast = False
    if (
        target.dtype == "float64"
        and not any(c.difference.identical for c in found)
        and bench.view.float32_numbers
    ):
        # float32 arithmetic kept in float64 (a torch table's .double(), numpy's default): read
        # as the float32 table it holds, where that names it bit for bit
        narrowed = dataclasses.replace(bench.target, dtype="float32")
        more, narrowed_bench, more_said = _candidates(narrowed, threshold)
        more += _deferred(narrowed_bench, more)
        if any(c.difference.identical for c in more):
            target.notes.append(
                f"every value of {target.label} is a float32 number: read as a float32 table"
            )
            found, bench, said, cast = more, narrowed_bench, more_said, True
    found = _ranked(found)
    if bench.sampled and found:
        found = _ranked(_confirm(bench, found))
        if bench.skipped and not found[0].identical:
            # the exact table was the rows scored but not every row (an ALiBi head the sample
            # missed): the variants it stood in for are scored and confirmed after all
            bench.skipped = ""
            more = _deferred(bench, [])
            found = _ranked(found + (_confirm(bench, more) if more else []))
        target.notes += [_sampled(bench)] if bench.checked else []
        target.notes += [bench.skipped] if bench.skipped else []
    elif bench.sampled:
        target.notes.append(
            f"timestep tables are looked for in tables of up to {WHOLE_ELEMENTS} "
            f"elements; this one has {target.rows * target.cols}"
        )
    # what a family noticed while reading (a scaling it could not fit) is said where its
    # candidate is the best, or where none is bit for bit; a table another family names bit
    # for bit is not the subject of a rope fit's note
    if found and (found[0].identical or exceptions(found[0], target) is not None):
        target.notes += said.get(found[0].spec.family, [])
    else:
        target.notes += [note for notes in said.values() for note in notes]
    for c in found:
        c.spec, c.composed = _as_held(c.spec, target, transposed, cast)
    # among the tables that are the file bit for bit, one a single command builds comes first
    found.sort(key=lambda c: (not c.identical, c.identical and bool(c.composed)))
    return found


def _deferred(bench: Bench, found: list[Candidate]) -> list[Candidate]:
    """A long table's seed and library variants, scored where no exact table is it on the
    sample (building them costs most, torch's import first)."""
    if bench.deferred and any(c.difference.identical for c in found):
        names = sorted({spec.variant for _, spec, _, _ in bench.deferred})
        bench.skipped = (  # said once the confirming pass has the exact table whole
            f"on the rows scored the table is pe-cli's exact table, so the seed and library variants "
            f"proposed ({', '.join(names)}) were not built; compare FILE VARIANT checks one"
        )
        return []
    return [c for c in (bench.variant(*deferred) for deferred in bench.deferred) if c is not None]


def _as_held(
    spec: TableSpec, target: Source, transposed: bool, cast: bool
) -> tuple[TableSpec, str]:
    """A candidate's spec as the file holds its table: in the file's dtype (a variant's values
    that are the file's are exact in it), in the shape of the file's array where the family
    writes that shape; and how the file's table is composed from the spec's, where it is not
    the spec's table itself (the transpose of it, or a cast no generate command makes: a
    float64 file of float32 numbers is a variant's float32 arithmetic written in float64, but
    only the cast of pe-cli's exact float32 table)."""
    composed = []
    held = changed(spec, dtype=target.dtype)
    if cast:
        variant = find_variant(spec)
        if variant is None or held is None or variant.ends_float64(held):
            held = None
    if held is None:  # pe-cli's exact float32 table, or a variant that writes only its dtype
        held = spec.replace(dtype="float32") if cast else spec
        composed.append(f"the {target.dtype} cast of")
    if transposed:
        composed.append("the transpose of")
    if not composed and target.dims is not None and held.dims != target.dims:
        for shape in FAMILIES[held.family].shapes:
            shaped = changed(held, shape=shape)
            if shaped is not None and shaped.dims == target.dims:
                return shaped, ""
    return held, " ".join(composed)


def _ranked(found: list[Candidate]) -> list[Candidate]:
    """The candidates in order: bit-identical ones first (the roundest base among them: two
    frequency laws can round to the same float32 table), then those bit for bit but for a few
    columns or rows (a buffer overwritten), then those the table matches (within
    match_margin), nearest first but the roundest base among those within twice the nearest's
    error (the same real table under two laws: concat at base 1000 is tensor2tensor at
    805.842), then the rest by RMS error (the largest error of a table right but for its
    slowest column can exceed one wrong in every element: a scaled RoPE table's plain law,
    2.0, and an angle table, 1.0); among equals exact, library, recipe, and the library that
    publishes an arithmetic before those that copy it. One bit for bit but for a few columns
    or rows comes before those that are not, and, on a long table, one checked so over every
    row before those measured on the sample only (their errors are over other rows)."""
    best = min((c.difference.max_abs for c in found if not _far(c)), default=0.0)

    def order(c: Candidate):
        d, far = c.difference, _far(c)
        alike = d.identical or (not far and d.max_abs <= 2 * best)
        return (
            not c.identical,
            not d.identical,
            not (c.confirmed and _excepted(c)),  # named with its exceptions, over every row
            not _excepted(c),
            far,
            not alike,
            digits(c.spec.base) if alike else 0,
            d.rms if far else d.max_abs,
            c.rank,
            c.follows,
        )

    return sorted(found, key=order)


def _excepted(c: Candidate) -> bool:
    """Whether a candidate is the table bit for bit but for a few columns or rows (where
    compared): named with them listed, before one that differs all over."""
    return _a_few(len(c.unequal_columns), c.spec.cols, len(c.unequal_rows), c.spec.rows)


def _a_few(columns: int, of_columns: int, rows: int, of_rows: int) -> bool:
    """Whether a table differs from a candidate in a few of its columns or else a few of its
    rows (core.names.few): the exceptions a candidate is named with."""
    return few(columns, of_columns) or few(rows, of_rows)


def _far(c: Candidate) -> bool:
    """Whether the table is further from a candidate than compare's rule for a match."""
    d = c.difference
    return not d.identical and d.max_abs > match_margin(c.spec.reach, d.dtype)


def _candidates(
    target: Source, threshold: float
) -> tuple[list[Candidate], Bench | None, dict[str, list[str]]]:
    """Every family's scored candidates, the bench they were scored on (None for a table of
    NaN or infinite values), and each family's notes on what it read."""
    sampled = target.rows * target.cols > WHOLE_ELEMENTS
    values = (
        target.block(0, min(FIT_ROWS, max(16, FIT_ELEMENTS // target.cols)))
        if sampled
        else target.whole()
    )
    bench = Bench(target, View(target, values, sampled), threshold)
    for looked in (values, bench.seen):
        bad = np.argwhere(~np.isfinite(looked))
        if len(bad):
            row = int(bad[0][0]) if looked is values else int(bench.rows[bad[0][0]])
            target.notes.append(
                f"it holds NaN or infinite values (the first at position {row}, dimension "
                f"{int(bad[0][1])}), which no formula writes"
            )
            return [], None, {}
    degenerate = _nothing_turns(target, values, sampled)
    if degenerate is not None:
        target.notes.append(degenerate)
        return [], None, {}
    found, said = [], {}
    for name, read in READERS.items():
        said[name] = []
        try:  # any table may come in (constant, zero or NaN columns): no numpy warning goes out
            with np.errstate(all="ignore"):
                found += bench.read(read(bench.view), said[name])
        except BadInput:  # a reading the family cannot have
            continue
    return found, bench, said


def _nothing_turns(target: Source, values: np.ndarray, sampled: bool) -> str | None:
    """What a table is where every value is one number, or every column one number down its
    rows (a buffer saved before it was filled): a positional table has columns that turn, and
    where none does, none is claimed (a table of identical rows matches many tables of one
    position, and says nothing of any). None where some column turns."""
    first_row = values[:1]
    rows_alike = len(values) > 1 and np.array_equal(
        values, np.broadcast_to(first_row, values.shape)
    )
    if not rows_alike and not (values.size and np.all(values == values.flat[0])):
        return None
    if sampled:  # the rows fitted from: the rest of the table too
        for _, block in target.blocks():
            if not np.array_equal(block, np.broadcast_to(first_row, block.shape)):
                return None
    if np.all(first_row == first_row.flat[0]):
        value = float(first_row.flat[0])
        return (
            f"every one of its {target.rows * target.cols:,} values is {value:g}: nothing "
            "turns, and no positional table is claimed"
        )
    return (
        f"every column holds one value at all {target.rows:,} positions: nothing turns, and no "
        "positional table is claimed"
    )


def exceptions(best: Candidate, target: Source) -> dict | None:
    """Where the table is a confirmed candidate bit for bit but for a few of its columns (at
    most LISTED and a 16th of them) or else a few rows (a broken column, a row overwritten):
    {"columns": [...]} or {"rows": [...]}, as the table's indices; None otherwise."""
    if best.identical or not best.confirmed:
        return None
    columns, rows = best.unequal_columns, best.unequal_rows
    if few(len(columns), target.cols):
        return {"columns": columns}
    if few(len(rows), target.rows):
        return {"rows": rows}
    return None


def _first(indices: np.ndarray) -> list[int]:
    """The first LISTED + 1 of some indices: enough to say there are more than LISTED."""
    return [int(i) for i in indices[: LISTED + 1]]


@dataclass
class _Pass:
    """One candidate's table streamed beside the file's in the confirming pass, and what the
    pass found: each row's largest |difference| (NaN where one side is), how many elements
    differ, the first rows where any does, and the columns where any does."""

    candidate: Candidate
    blocks: object
    worst: np.ndarray
    columns: np.ndarray
    differing: int = 0
    rows: list = dataclasses.field(default_factory=list)

    def add(self, first: int, block: np.ndarray) -> None:
        _, built = next(self.blocks)
        differ = block != built
        if differ.any():
            self.worst[first : first + len(block)] = np.where(differ, np.abs(block - built), 0).max(
                axis=1
            )
            self.differing += int(np.count_nonzero(differ))
            if len(self.rows) <= LISTED:
                self.rows += (first + np.flatnonzero(differ.any(axis=1))).tolist()
            self.columns |= differ.any(axis=0)


def _confirm(bench: Bench, found: list[Candidate]) -> list[Candidate]:
    """The best candidates (those bit-identical on the sample, up to CONFIRMED) checked against
    every row of the table in one pass: bit-identity over the whole table, and the error
    figures over the sample and the rows where each differs most."""
    target = bench.target
    chosen = [c for c in found[:CONFIRMED] if c.difference.identical] or found[:1]
    passes = []
    for c in chosen:
        try:  # the candidate's table in the target's dtype, in the target's blocks
            built = c.spec if find_variant(c.spec) is not None else _exact(c.spec, target.dtype)
            blocks = from_spec(built, c.name).blocks()
        except BadInput as e:  # a variant's whole table, and no room for it
            target.notes.append(f"{c.name} was not checked beyond the sample: {e}")
            continue
        passes.append(_Pass(c, blocks, np.zeros(target.rows), np.zeros(target.cols, bool)))
    if not passes:
        return found
    bench.checked += len(passes)
    for first, block in target.blocks():
        for one in passes:
            one.add(first, block)
    for one in passes:
        c = one.candidate
        c.confirmed = True
        c.unequal_rows = _first(np.array(one.rows, dtype=np.int64))
        c.unequal_columns = _first(np.flatnonzero(one.columns))
        if one.differing:
            rows = np.union1d(
                bench.rows, np.argsort(np.nan_to_num(one.worst, nan=np.inf))[-WORST_ROWS:]
            )
            reference = exact_at(_exact(c.spec, "float64"), rows)
            c.difference = _measured(
                target.at(rows),
                reference,
                rows,
                target.rows,
                target.dtype,
                c.spec.offset,
                bench.threshold,
            )
        c.difference.differing = one.differing
    # a variant is a candidate only where it writes the table bit for bit, but for a few
    # columns or rows
    return [
        c
        for c in found
        if not (c.confirmed and c.difference.differing and find_variant(c.spec))
        or exceptions(c, target) is not None
    ]


def _sampled(bench: Bench) -> str:
    """What a long table's candidates were scored on, and how many every row checked (said
    once, after every confirming pass)."""
    target = bench.target
    return (
        f"{target.label} has {target.rows} rows: candidates were scored on {len(bench.rows)} of "
        f"them (the first {SAMPLE_HEAD}, the last {SAMPLE_TAIL}, those at powers of two, zero "
        f"rows); the best {bench.checked} checked for bit-identity on every row; errors are over "
        "the rows scored and those where a candidate differs most"
    )
