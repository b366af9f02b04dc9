#!/usr/bin/env python3
"""Compares two sets of planned cubins (hummingd_planned_cubins --out DIR).

Pairs the kernels of OLD and NEW by (spec, layer, tile), and per pair prints
whether their SASS instructions are identical, the length of each one's
longest loop (instructions between a backward branch and its target: the
k-loop of a decode kernel), registers and stack bytes. Kernels in one set
only are listed. Exit status 0; the summary line counts identical pairs.

  sass_compare.py NVDISASM CUOBJDUMP OLD NEW
"""
import os
import re
import subprocess
import sys

DATA = re.compile(r"\.(short|byte|word|dword|align|zero)\b")
INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^(\.L_x_\d+):")
BRANCH = re.compile(r"\bBRA\b.*`\(?(\.L_x_\d+)")


def read_index(folder):
    kernels = {}
    if not os.path.isfile(f"{folder}/index.tsv"):
        sys.exit(f"sass_compare: no {folder}/index.tsv "
                 "(fill the folder with hummingd_planned_cubins --out)")
    with open(f"{folder}/index.tsv") as index:
        for line in index:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 5:
                sys.exit(f"sass_compare: {folder}/index.tsv: bad line {line!r}")
            kernels[tuple(fields[1:4])] = f"{folder}/{fields[0]}.cubin"
    return kernels


def sass(nvdisasm, cubin):
    text = subprocess.run([nvdisasm, "-c", cubin], check=True,
                          capture_output=True, text=True).stdout
    instructions, labels = [], {}
    for line in text.splitlines():
        label = LABEL.match(line.strip())
        if label:
            labels[label.group(1)] = len(instructions)
            continue
        match = INSTRUCTION.match(line)
        if match and not DATA.search(line):
            instructions.append(match.group(2))
    return instructions, labels


def longest_loop(instructions, labels):
    longest = 0
    for at, text in enumerate(instructions):
        branch = BRANCH.search(text)
        if branch and labels.get(branch.group(1), at + 1) <= at:
            longest = max(longest, at - labels[branch.group(1)] + 1)
    return longest


def resources(cuobjdump, cubin):
    text = subprocess.run([cuobjdump, "-res-usage", cubin], check=True,
                          capture_output=True, text=True).stdout
    registers = re.findall(r"REG:(\d+)", text)
    stack = re.findall(r"STACK:(\d+)", text)
    return (registers[-1] if registers else "?", stack[-1] if stack else "?")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    nvdisasm, cuobjdump, old_dir, new_dir = sys.argv[1:]
    old, new = read_index(old_dir), read_index(new_dir)
    identical = 0
    print("same\tloop new/old\tregs new/old\tstack new/old\tspec\tlayer\ttile")
    for key in sorted(set(old) & set(new)):
        old_sass, old_labels = sass(nvdisasm, old[key])
        new_sass, new_labels = sass(nvdisasm, new[key])
        same = old_sass == new_sass
        identical += same
        old_loop = longest_loop(old_sass, old_labels)
        new_loop = longest_loop(new_sass, new_labels)
        old_regs, old_stack = resources(cuobjdump, old[key])
        new_regs, new_stack = resources(cuobjdump, new[key])
        print(f"{'same' if same else 'diff'}\t{new_loop}/{old_loop}\t"
              f"{new_regs}/{old_regs}\t{new_stack}/{old_stack}\t" +
              "\t".join(key))
    for key in sorted(set(old) - set(new)):
        print("old only\t\t\t\t" + "\t".join(key))
    for key in sorted(set(new) - set(old)):
        print("new only\t\t\t\t" + "\t".join(key))
    print(f"sass_compare: {identical} of {len(set(old) & set(new))} pairs "
          f"identical; {len(set(old) - set(new))} old only, "
          f"{len(set(new) - set(old))} new only")


if __name__ == "__main__":
    main()
