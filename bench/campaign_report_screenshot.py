"""Look at a campaign's HTML report in a real headless browser and keep a screenshot.

    python bench/campaign_report_screenshot.py CAMPAIGN_DIR [OUT.png]

Writes the report (``ctsgen campaign report``), opens report.html in
Debian's chromium (``apt-get install -y chromium``) headless, and saves a
full-width screenshot (default: CAMPAIGN_DIR/report/screenshot.png). The
page must render from the file alone: the report is self-contained. Exits 1
when chromium is missing or writes no image.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from ctsgen.campaign.report import write_report
from ctsgen.campaign.store import CampaignDir


def screenshot(page: Path, out: Path, width: int = 1200, height: int = 2600) -> bool:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.stderr.write("chromium is not installed -> apt-get install -y chromium\n")
        return False
    out.unlink(missing_ok=True)
    # --no-sandbox: CI containers run as root; the page is our own file
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size={width},{height}", f"--screenshot={out}", page.resolve().as_uri()],
                   capture_output=True, timeout=120, check=False)
    return out.exists() and out.stat().st_size > 0


def main(argv: list[str]) -> int:
    cdir = CampaignDir(argv[0])
    md, page = write_report(cdir)
    out = Path(argv[1]) if len(argv) > 1 else page.parent / "screenshot.png"
    if not screenshot(page, out):
        return 1
    print(f"report: {md}, {page}; screenshot: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
