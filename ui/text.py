"""A person's text inside Streamlit markdown (labels, captions, notices): shown as typed,
never read as markup."""

from __future__ import annotations

import re


def md_escape(text: str) -> str:
    """A person's text made safe for Streamlit markdown (labels, captions): shown as typed.

    Escapes the characters that start inline markup anywhere, and a leading character
    that would start a heading, list or quote.
    """
    out = "".join("\\" + ch if ch in "\\`*_[]<>|~$" else ch for ch in str(text))
    lead = re.match(r"^(\s*)[-+#>=]", out) or re.match(r"^(\s*\d+)[.)]", out)
    if lead:
        out = lead.group(1) + "\\" + out[lead.end(1):]
    return out


def md_code(text: str) -> str:
    """``text`` as a Markdown code span, shown as typed even where it holds backticks (the
    fence is one backtick longer than its longest run of them)."""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""  # a space on each side is dropped
    return f"{fence}{pad}{text}{pad}{fence}"
