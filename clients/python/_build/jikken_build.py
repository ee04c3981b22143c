"""A PEP 517 build backend in the standard library alone, for this one package.

setuptools, the usual backend, is not in every virtualenv (Python 3.12 stopped putting it there)
and pip's build isolation would fetch it from an index; this backend lets
``pip install ./clients/python`` work offline in any fresh virtualenv. It builds a pure-Python
wheel of the module jikken_track and the package jikken, with the name and version of
pyproject.toml, and an sdist of the same files.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ["jikken_track.py"]
PACKAGES = ["jikken"]


def _project():
    """Name, version and description from pyproject.toml's [project] table (tomllib is 3.11+)."""
    text = open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8").read()
    table = text.split("[project]", 1)[1].split("\n[", 1)[0]
    fields = dict(re.findall(r'^(\w[\w-]*)\s*=\s*"([^"]*)"', table, re.M))
    return fields["name"], fields["version"], fields.get("description", ""), fields.get("requires-python", "")


def _sources():
    """(path in the archive, path on disk) of every file shipped."""
    out = [(m, os.path.join(ROOT, m)) for m in MODULES]
    for pkg in PACKAGES:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, pkg)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for f in sorted(filenames):
                if f.endswith(".py"):
                    disk = os.path.join(dirpath, f)
                    out.append((os.path.relpath(disk, ROOT).replace(os.sep, "/"), disk))
    return out


def _metadata():
    name, version, summary, python = _project()
    lines = ["Metadata-Version: 2.1", "Name: " + name, "Version: " + version, "Summary: " + summary]
    if python:
        lines.append("Requires-Python: " + python)
    lines += ["Provides-Extra: pandas", 'Requires-Dist: pandas; extra == "pandas"',
              "Provides-Extra: s3", 'Requires-Dist: boto3; extra == "s3"']
    return "\n".join(lines) + "\n"


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = _project()[:2]
    dist = "%s-%s" % (name, version)
    wheel = dist + "-py3-none-any.whl"
    files = [(arc, open(disk, "rb").read()) for arc, disk in _sources()]
    files.append((dist + ".dist-info/METADATA", _metadata().encode()))
    files.append((dist + ".dist-info/WHEEL",
                  b"Wheel-Version: 1.0\nGenerator: jikken_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    record = [_record_line(arc, data) for arc, data in files] + [dist + ".dist-info/RECORD,,"]
    files.append((dist + ".dist-info/RECORD", ("\n".join(record) + "\n").encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            z.writestr(zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    name, version = _project()[:2]
    dist = "%s-%s" % (name, version)
    extra = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")),
             ("_build/jikken_build.py", os.path.abspath(__file__))]
    with tarfile.open(os.path.join(sdist_directory, dist + ".tar.gz"), "w:gz") as tar:
        for arc, disk in _sources() + extra:
            tar.add(disk, arcname=dist + "/" + arc)
        info = tarfile.TarInfo(dist + "/PKG-INFO")
        meta = _metadata().encode()
        info.size = len(meta)
        tar.addfile(info, io.BytesIO(meta))
    return dist + ".tar.gz"
