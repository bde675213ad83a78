#!/usr/bin/env python3
# Fill the cover letter `git format-patch --cover-letter` wrote (PATCH) with the subject and text
# of TEXT (its first line the subject, a blank line, then the body). Fails if the placeholders
# are not there, so that a cover letter is never sent with them.
# Usage: scripts/cover-letter.py PATCH TEXT
import sys

patch, text = sys.argv[1], sys.argv[2]
with open(text) as f:
    lines = f.read().split("\n")
subject, body = lines[0].strip(), "\n".join(lines[1:]).strip("\n")
if not subject or lines[1:2] != [""]:
    sys.exit(f"cover-letter: {text}: a subject line, then a blank line, then the text")
with open(patch) as f:
    s = f.read()
for mark in ("*** SUBJECT HERE ***", "*** BLURB HERE ***"):
    if s.count(mark) != 1:
        sys.exit(f"cover-letter: {patch}: no single '{mark}' to fill")
s = s.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", body)
with open(patch, "w") as f:
    f.write(s)
