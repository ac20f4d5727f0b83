"""Re-export every campaign bucket's case with today's code (its compare rule included) and print
where each repro went: `python bench/device/reexport_buckets.py BUCKETS_DIR OUT_DIR`. A repro pack
records the rule it was exported under, so replaying the old repro re-judges by the old rule."""

import json
import sys
from pathlib import Path

from ctsgen.families import get_family
from ctsgen.repro import export_case

for b in sorted(Path(sys.argv[1]).glob("*/bucket.json")):
    record = json.loads(b.read_text())
    case = get_family(record["case"]["family"]).case_from_json(record["case"])
    print(export_case(case, Path(sys.argv[2]) / b.parent.name, backend="vulkan"))
