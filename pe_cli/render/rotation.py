"""The rotation read back from activations (compare AFTER --before BEFORE, pe_cli.probe), for a
person: what turns and how, the table named, the claim, the findings."""

from __future__ import annotations


def lines(found, width: int = 80) -> list[str]:
    """The report as lines of at most `width` columns (also the message of pe_cli.testing's
    AssertionError): sentences wrapped, commands folded as the shell reads them."""
    import textwrap

    from . import _folded

    shown = []
    for line in _said(found):
        if line.startswith("    pe-cli "):
            shown += _folded(line.strip(), width).split("\n")
        else:
            indent = " " * (len(line) - len(line.lstrip(" -")))
            shown += textwrap.wrap(
                line, width, subsequent_indent=indent + "  ", break_on_hyphens=False
            ) or [""]
    return shown


def _said(found) -> list[str]:
    """The report's sentences, one a line, commands indented by four."""
    reading = found.reading
    said = [f"{found.source}:"]
    if reading.fit is None:
        said += [f"- {f.text}" for f in found.findings]
        return said
    dims = found.rotary_dims
    head_dim = reading.act.head_dim
    if dims:
        fit = reading.fit
        scale = f", scaled by {fit.scale:.7g}" if abs(fit.scale - 1) > 8 * reading.act.unit else ""
        said.append(
            f"  rotates {len(dims)} of {head_dim} dims, {fit.pairing.name} pairing{scale}"
            f" ({_pairs(fit.pairing)})"
        )
    if found.passed:
        said.append(f"  {found.passed}")
    named = found.named
    if reading.axes is not None:
        said += _axes(found)
    elif named is not None:
        exact = ", bit for bit (the op's own cos)" if found.exact and named.identical else ""
        said.append(f"  its cos table: {named.name}, {named.identity}{exact}")
        if named.command:
            said.append(f"    {named.command}")
        elif named.built_by:
            said.append(f"    {named.built_by}")
    elif dims:
        said.append("  its cos table: no built-in table explains its angles")
    if found.rebuilt is not None:
        r = found.rebuilt
        before, after = found.labels
        if r.identical:
            said.append(
                f"  {after} is {before} rotated by {r.variant}'s cos and sin, bit for bit "
                f"({reading.act.dtype})"
            )
        else:
            said.append(
                f"  {r.variant}'s cos and sin applied to {before} ({reading.act.dtype}) differ "
                f"from {after} by up to {r.max_abs:.3g} (at {r.where})"
            )
    if found.gap is not None:
        # a dump's table is named by its angles: within the bound, never bit for bit
        within = (
            ": named within the bound below (past float32's rounding of each angle p w), "
            "not bit for bit"
            if found.by_angles
            else ""
        )
        said.append(
            f"  its angles are within {found.gap.max_abs:.2g} rad of that table's exact "
            f"ones (the largest at {found.gap.where}){within}"
        )
    if dims:
        said.append(
            f"  angles read back to within {found.bound:.2g} rad of the cos and sin applied "
            f"(the rounding of {reading.act.dtype})"
        )
    if found.expected is not None:
        e = found.expected
        what = (
            f"rotates {e.rotary_dims} dims, {e.pairing} pairing"
            if e.spec is not None
            else f"applies no rotation ({e.why})"
        )
        said.append(f"  {e.label} {what}")
        if e.command:
            said.append(f"    {e.command}")
    said += [f"- {f.text}" for f in found.findings]
    said += [f"  {note}" for note in found.notes]
    return said


def _axes(found) -> list[str]:
    """Rows at several position axes: which pairs follow which axis, the layout and sections
    that puts them there, and the table at these rows."""
    named, laid = found.named, found.laid
    said = []
    if named is not None:
        said.append(f"  its frequencies: {named.name}, {named.identity}")
    else:
        said.append("  its frequencies: no built-in table explains them")
    if laid is None:
        return said
    sections = ",".join(str(s) for s in laid.sections)
    said.append(f"  {laid.said}: {laid.spec.axes} sections {sections} ({laid.summary})")
    exact = ", bit for bit (the op's own cos)" if laid.identical else ""
    said.append(f"  its cos table at these positions: --variant {laid.spec.variant}{exact}")
    said.append(f"    {laid.command}")
    return said


def _pairs(p) -> str:
    first, second = int(p.first[0]), int(p.second[0])
    said = f"dim {first} with {second}, ..."
    if p.written:
        out = p.out
        said += f"; written back in {p.written} order: to dims {int(out[0][0])} and {int(out[1][0])}, ..."
    return said


def rotation(found) -> None:
    from . import console

    out = console()
    for line in lines(found):
        out.print(line, highlight=False, markup=False, soft_wrap=False)
