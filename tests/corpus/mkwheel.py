#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkwheel.py NAME VERSION OUTDIR: a small pure-Python wheel (a package, a
module, a data file and a console script), built by hand so no build
backend or index is needed. Prints the wheel's path."""
import base64, hashlib, sys, zipfile

name, ver, out = sys.argv[1:4]
di = f"{name}-{ver}.dist-info"
files = {
    f"{name}/__init__.py": f'__version__ = "{ver}"\nfrom .core import answer\n',
    f"{name}/core.py": f'def answer():\n    return "answer from {ver}"\n\ndef main():\n    print(answer())\n',
    f"{name}/data.txt": f"data {ver}\n",
    f"{name}_compat.py": f'VERSION = "{ver}"\n',
    f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\nSummary: corpus package\n",
    f"{di}/WHEEL": "Wheel-Version: 1.0\nGenerator: lgrun-corpus\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    f"{di}/entry_points.txt": f"[console_scripts]\n{name} = {name}.core:main\n",
    f"{di}/top_level.txt": f"{name}\n{name}_compat\n",
}
record = []
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(text.encode())}")
record.append(f"{di}/RECORD,,")
files[f"{di}/RECORD"] = "\n".join(record) + "\n"
whl = f"{out}/{name}-{ver}-py3-none-any.whl"
with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
    for path, text in files.items():
        z.writestr(path, text)
print(whl)
