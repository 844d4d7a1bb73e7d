"""report.html: one self-contained page (inline CSS, PNGs as data: URIs, no script, no
external address), so a reader can open it anywhere without running anything."""
from __future__ import annotations

import base64
import html as _html
import re
import shlex

_CSS = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;max-width:62em;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;
border-bottom:1px solid #ccc}
.meta{color:#555;font-size:.9em}
.tw{overflow-x:auto;margin:.6em 0 1.4em}
table{border-collapse:collapse;font-size:.85em}
p.cap{font-weight:bold;margin:1.2em 0 .3em}
th,td{border:1px solid #bbb;padding:.25em .6em}th{background:#eee}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.k{white-space:nowrap}
table.prov td{font-size:.85em;vertical-align:top}table.prov td:first-child{font-family:"DejaVu Sans Mono",monospace}
figure{margin:1em 0 1.6em}figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:.9em;color:#444}
code,pre{font-family:"DejaVu Sans Mono",monospace;font-size:.9em}
pre{background:#f5f5f5;padding:.5em;overflow-x:auto}
"""


def _e(text) -> str:
    return _html.escape(str(text), quote=True)


def _inline(text: str) -> str:
    """The markdown a reproduction's text uses inline: `code`, **bold**, *emphasis*."""
    out = []
    for i, part in enumerate(re.split(r"`([^`]*)`", text)):
        if i % 2:
            out.append(f"<code>{_e(part)}</code>")
            continue
        part = _e(part)
        part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", part)
        part = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", part)
        out.append(part)
    return "".join(out)


def markdown(text: str) -> str:
    """Paragraphs, "- " lists and "## " headings; anything else is plain text."""
    blocks = []
    for para in re.split(r"\n\s*\n", text.strip()):
        lines = [ln.rstrip() for ln in para.splitlines()]
        if not lines:
            continue
        if lines[0].startswith("#"):
            blocks.append(f"<h2>{_inline(lines[0].lstrip('#').strip())}</h2>")
            lines = lines[1:]
            if not lines:
                continue
        if all(ln.lstrip().startswith(("- ", "* ")) or ln.startswith("  ") for ln in lines):
            items, cur = [], []
            for ln in lines:
                if ln.lstrip().startswith(("- ", "* ")):
                    if cur:
                        items.append(" ".join(cur))
                    cur = [ln.lstrip()[2:]]
                else:
                    cur.append(ln.strip())
            items.append(" ".join(cur))
            blocks.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
        else:
            blocks.append(f"<p>{_inline(' '.join(ln.strip() for ln in lines))}</p>")
    return "\n".join(blocks)


def _table(key: str, t: dict) -> str:
    from .study import show
    head = "".join(f"<th>{_e(c)}</th>" for c in t["columns"])
    body = []
    for r in t["rows"]:
        cells = "".join(
            f'<td class="n">{_e(show(v))}</td>' if isinstance(v, (int, float)) and
            not isinstance(v, bool) else
            f'<td class="k">{_e(show(v))}</td>' if len(show(v)) <= 24 else
            f"<td>{_e(show(v))}</td>" for v in r)
        body.append(f"<tr>{cells}</tr>")
    return (f'<p class="cap" id="caption-{_e(key)}">{_inline(t["caption"])}</p>'
            f'<div class="tw"><table id="table-{_e(key)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            f'<p class="meta">Data: <code>{_e(key)}.csv</code></p>')


def _figure(key: str, f: dict) -> str:
    data = base64.b64encode(f["png"]).decode("ascii")
    return (f'<figure id="figure-{_e(key)}"><img alt="{_e(f["caption"])}" '
            f'src="data:image/png;base64,{data}"><figcaption>{_inline(f["caption"])} '
            f"(<code>{_e(key)}.png</code>)</figcaption></figure>")


def _platforms(study) -> str:
    if not study.platforms:
        return ""
    parts = ["<h2>Platforms and where their numbers come from</h2>"]
    for name, p in study.platforms.items():
        parts.append(f'<h3 id="platform-{_e(name)}">{_e(name)}</h3>'
                     f"<p>{_e(p['description'])}<br><code>{_e(p['summary'])}</code></p>")
        if p["provenance"]:
            items = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>"
                            for k, v in p["provenance"].items())
            parts.append(f'<div class="tw"><table class="prov"><thead><tr><th>key</th>'
                         f'<th>where its value comes from</th></tr></thead>'
                         f"<tbody>{items}</tbody></table></div>")
        else:
            parts.append("<p>No provenance recorded in this platform file.</p>")
    return "\n".join(parts)


def html(study) -> str:
    body = []
    for kind, payload in study.blocks:
        if kind == "text":
            body.append(markdown(payload))
        elif kind == "table":
            body.append(_table(payload, study.tables[payload]))
        else:
            body.append(_figure(payload, study.figures[payload]))
    commands = [study.rerun_command(), *study.commands]
    rerun = "\n".join(shlex.join(c) for c in commands)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>{_e(study.title)}</title>
<style>{_CSS}</style>
</head>
<body>
<h1>{_e(study.title)}</h1>
<p class="meta">hopsim {_e(study.results()["hopsim_version"])} &middot; reproduction
<code>{_e(study.name)}</code> &middot; seed {study.seed}{" &middot; quick mode (fewer points)" if study.quick else ""}</p>
{chr(10).join(body)}
{_platforms(study)}
<h2>Rerun it</h2>
<pre>{_e(rerun)}</pre>
</body>
</html>
"""
