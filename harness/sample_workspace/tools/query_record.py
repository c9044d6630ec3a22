"""Print one order record as JSON: python tools/query_record.py --id ORD-1001

Exit status 0 with the record on stdout, or 1 with the reason on stderr.
The id is checked before any file is opened, so it can only name a record.
"""

import argparse
import json
import re
import sys
from pathlib import Path

RECORDS = Path(__file__).resolve().parent.parent / "data" / "records"


def main() -> int:
    parser = argparse.ArgumentParser(description="Print one order record as JSON.")
    parser.add_argument("--id", required=True, help="order id, e.g. ORD-1001")
    record_id = parser.parse_args().id.strip().upper()
    if not re.fullmatch(r"ORD-\d{4}", record_id):
        print(f"error: {record_id!r} is not an order id (expected ORD- and 4 digits)",
              file=sys.stderr)
        return 1
    path = RECORDS / f"{record_id}.json"
    if not path.is_file():
        print(f"error: no record with id {record_id}", file=sys.stderr)
        return 1
    record = json.loads(path.read_text(encoding="utf-8"))
    print(json.dumps(record, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
