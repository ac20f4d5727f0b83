"""A whole campaign on a planted device: the reference backend with the H100's SetDimension deviation,
giving what a device may give within the spec (float results on the other faithful neighbour, zeros of
the other sign where the judge ignores the sign), and a second, distinct bug in cm2-gemm
(tests/planted_device.py). Every shape of the deviation, in every family that reaches it and in both
of cm2-program's domains, is one bucket; the other bug is a second; there is no third
(docs/campaign.md, "Buckets")."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctsgen.campaign.report import write_report
from ctsgen.campaign.store import CampaignDir

CTSGEN = [sys.executable, "-m", "ctsgen", "campaign"]
DEVIATION, OTHER = "mutant:setdimension-floor", "mutant:gemm-ignores-beta"


def shapes_seen(cdir: CampaignDir) -> tuple[set, set]:
    """The families of the deviation's findings so far, and the domains of its cm2-program ones."""
    found = [f for f in cdir.all_findings() if f["bucket"] == DEVIATION]
    families = {f["case"]["family"] for f in found}
    domains = {f["case"].get("domain", "exact") for f in found if f["case"]["family"] == "cm2-program"}
    return families, domains


@pytest.mark.slow
def test_a_campaign_on_the_planted_device_has_one_bucket_per_bug(tmp_path: Path) -> None:
    """Every family, two workers, until the deviation has shown in cm2-program's two domains and in
    tensor-layout and decode, and the other bug has shown (about 30 s here; at most 150 s)."""
    root = tmp_path / "c"
    cdir = CampaignDir(root)
    proc = subprocess.Popen([*CTSGEN, "start", str(root), "--backend", "tests.planted_device:PlantedWithGemmBug",
                             "--workers", "2", "--time", "150", "--round-examples", "40", "--shrink-time", "3",
                             "--seed", "11"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        while proc.poll() is None:
            families, domains = shapes_seen(cdir)
            if families >= {"cm2-program", "tensor-layout", "decode"} and domains == {"exact", "float"} and \
                    any(b["key"] == OTHER for b in cdir.buckets()):
                break
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    families, domains = shapes_seen(cdir)
    assert families >= {"cm2-program", "tensor-layout", "decode"} and domains == {"exact", "float"}, \
        (families, domains, out[-3000:])
    assert sorted(b["key"] for b in cdir.buckets()) == [OTHER, DEVIATION], out[-3000:]
    assert {f["bucket"] for f in cdir.all_findings()} == {OTHER, DEVIATION}
    md, _ = write_report(cdir, tmp_path / "report")
    shown = next(line for line in md.read_text().splitlines() if line.startswith("Failing cases by family:")
                 and "tensor-layout" in line)  # the deviation's section says where it showed
    assert "cm2-program (float) " in shown and re.search(r"cm2-program \d", shown), shown  # both domains
    assert "decode " in shown and "cm2-gemm" not in shown, shown
