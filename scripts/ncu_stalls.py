#!/usr/bin/env python3
"""Warp-stall summary of Nsight Compute source-page CSVs (the <name>.csv files
scripts/ncu_profile.sh writes): per file, the share of all stall samples by
reason, by opcode, and the instructions that collected the most samples with
their three largest reasons.

    python3 scripts/ncu_stalls.py PROFILE.csv [...]
"""
import collections
import csv
import signal
import sys

SAMPLES = 'Warp Stall Sampling (All Samples)'


def opcode(source):
    words = source.split()
    if not words:
        return '?'
    # A predicate ("@P0", "@!PT") comes before the opcode.
    return words[1] if words[0].startswith('@') and len(words) > 1 else words[0]


def summarize(path, top=12):
    with open(path, newline='') as handle:
        rows = list(csv.reader(handle))
    # Row 0 names the kernel; row 1 is the header.
    header, data = rows[1], rows[2:]
    column = {name: i for i, name in enumerate(header)}
    reasons = [h for h in header
               if h.startswith('stall_') and 'Not Issued' not in h]
    by_reason = collections.Counter()
    by_opcode = collections.Counter()
    instructions = []
    total = 0
    for row in data:
        if len(row) < len(header) or not row[column[SAMPLES]].isdigit():
            continue
        samples = int(row[column[SAMPLES]])
        source = row[column['Source']].strip()
        counts = {r: int(row[column[r]]) for r in reasons
                  if row[column[r]].isdigit() and row[column[r]] != '0'}
        total += samples
        by_reason.update(counts)
        by_opcode[opcode(source)] += samples
        instructions.append((samples, source, counts))
    print(f'== {path}: {total} stall samples')
    if total == 0:
        return
    for reason, count in by_reason.most_common(9):
        print(f'   {reason:26s} {100 * count / total:5.1f}%')
    print('   by opcode: ' + ', '.join(
        f'{op} {100 * n / total:.1f}%' for op, n in by_opcode.most_common(12)))
    instructions.sort(key=lambda item: -item[0])
    for samples, source, counts in instructions[:top]:
        largest = sorted(counts.items(), key=lambda item: -item[1])[:3]
        print(f'   {100 * samples / total:5.1f}% {source[:60]:60s} {largest}')


if __name__ == '__main__':
    # Piped into head: end quietly when the reader stops, as other filters do.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    for csv_path in sys.argv[1:]:
        summarize(csv_path)
