"""Figure names come from the kernel, which runs the model's code: forged display metadata
names a chart only as a cleaned, bounded label, never a path the host would follow."""

from __future__ import annotations

import json

from jupyter_analyst.testing import python_step, text_step

FORGED = """\
import base64
from IPython.display import publish_display_data
png = base64.b64encode(b"\\x89PNG\\r\\n\\x1a\\n" + b"x" * 64).decode()
titles = ["outputs/../../etc/passwd", "Revenue\\x1b[31m\\u202e by\\nregion", "A" * 100_000, {"not": "text"}]
for n, title in enumerate(titles):
    publish_display_data({"image/png": png[:-4] + base64.b64encode(bytes([n, 0, 0])).decode()},
                         metadata={"image/png": {"jupyter_analyst": {"title": title, "variable": "x; rm -rf /"}}})
"""


def test_forged_titles_become_clean_bounded_names(analyst):
    a = analyst({"turns": [{"steps": [python_step(FORGED), text_step()]}]})
    assert a.run("draw").status == "completed"
    told = json.loads([m for m in a.server.requests[1]["messages"] if m["role"] == "tool"][-1]["content"])
    names = [m["name"] for m in told["artifacts"]]
    assert len(names) == 4
    assert names[0] == "outputs-..-..-etc-passwd.png"  # never under outputs/, never a path
    assert names[1] == "Revenue [31m by region.png"
    assert names[2].endswith("….png") and len(names[2]) <= 85
    assert names[3].endswith("-figure-4.png")  # not text: no label; the variable is not a name
    for name in names:
        assert "/" not in name and "\x1b" not in name and "\u202e" not in name and "\n" not in name
