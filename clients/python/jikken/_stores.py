"""The two kinds of jikken store, read-only: a folder and an S3 bucket (through boto3).

Both give the reader the same three operations on keys of the store's layout
(``runs/<run>/manifest.json``, ``runs/<run>/trials/<trial>/trial.json``, ...):
``get`` a whole object (None when it does not exist), ``dirs`` the names one level under a
prefix, and ``map`` a function of (store, item) over many items (a trial's files each), in
parallel: worker processes for a folder, threads for S3.
"""

import concurrent.futures
import multiprocessing
import os

# Below this many items a folder is read in this process: starting workers costs more.
PARALLEL_ABOVE = 4000


def open_store(url):
    """Open the store at url: a folder path, a file:// URL or s3://bucket/prefix."""
    if url is None:
        url = os.environ.get("JIKKEN_STORE") or ".jikken"
    url = os.fspath(url)
    if url.startswith("s3://"):
        return S3Store(url)
    if url.startswith("file://"):
        url = url[len("file://"):]
    elif "://" in url:
        raise ValueError("store %r: use a folder path or s3://bucket/prefix" % url)
    if not os.path.isdir(url):
        raise FileNotFoundError("store %r: no such folder (a jikken store holds runs/)" % url)
    return FolderStore(url)


class FolderStore:
    """A folder store: each key is a file under the folder, as jikken's store/fs.go lays it."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.location = self.root

    def _path(self, key):
        # Plain concatenation: os.path.join costs as much as the read at 100,000 trials.
        return self.root + os.sep + (key if os.sep == "/" else key.replace("/", os.sep))

    def get(self, key):
        # os.open and os.read cost a third of open(): this is the reader's inner loop.
        try:
            fd = os.open(self._path(key), os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            b = os.read(fd, 1 << 16)
            if len(b) < 1 << 16:
                return b  # a regular file reads short only at its end: one call for most
            chunks = [b]
            while b:
                b = os.read(fd, 1 << 20)
                chunks.append(b)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def map(self, fn, items, processes=None):
        """[fn(self, item) for item in items], split across worker processes for many items.

        Parsing JSON, not reading, is the cost at 100,000 trials, and one Python process parses
        on one core. Workers are forked (fn must be a module-level function); where fork is not
        available, or processes is 1, everything runs here.
        """
        n = processes or min(os.cpu_count() or 1, 16, len(items) // (PARALLEL_ABOVE // 4) or 1)
        if n <= 1 or len(items) <= PARALLEL_ABOVE or "fork" not in multiprocessing.get_all_start_methods():
            return [fn(self, it) for it in items]
        size = -(-len(items) // (4 * n))
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        ctx = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
            parts = pool.map(_chunk, [self.root] * len(chunks), [fn] * len(chunks), chunks)
            return [r for part in parts for r in part]

    def dirs(self, prefix):
        try:
            with os.scandir(self._path(prefix.rstrip("/"))) as it:
                return sorted(e.name for e in it if e.is_dir() and not e.name.startswith("."))
        except FileNotFoundError:
            return []


class S3Store:
    """An s3://bucket/prefix store read with boto3, configured as jikken's own S3 store is.

    Credentials and region come from boto3's usual chain (AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_REGION, ~/.aws); the endpoint from
    AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (MinIO, another S3-compatible service). Reading
    needs s3:ListBucket and s3:GetObject on the prefix.
    """

    def __init__(self, url):
        try:
            import boto3
            from botocore.config import Config
        except ImportError as e:
            raise ImportError(
                "reading %s needs boto3 (pip install boto3, or Debian's python3-boto3); "
                "or copy the run to a folder with 'jikken store sync RUN --to ./.jikken'" % url
            ) from e
        rest = url[len("s3://"):]
        self.bucket, _, prefix = rest.partition("/")
        if not self.bucket:
            raise ValueError("store %r: want s3://bucket/prefix" % url)
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.location = url
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None
        style = {"addressing_style": "path"} if endpoint else {}
        self.client = boto3.client("s3", endpoint_url=endpoint, config=Config(s3=style, max_pool_connections=32))
        self._errors = self.client.exceptions

    def get(self, key):
        try:
            resp = self.client.get_object(Bucket=self.bucket, Key=self.prefix + key)
        except self._errors.NoSuchKey:
            return None
        return resp["Body"].read()

    def map(self, fn, items, processes=None):
        """[fn(self, item) for item in items], 32 at a time: one request per object, as jikken
        itself reads a run."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:
            return list(pool.map(lambda it: fn(self, it), items))

    def dirs(self, prefix):
        out = []
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix + prefix, Delimiter="/"):
            for p in page.get("CommonPrefixes", []):
                out.append(p["Prefix"][len(self.prefix + prefix):].rstrip("/"))
        return sorted(out)


def _chunk(root, fn, items):
    st = FolderStore(root)
    return [fn(st, it) for it in items]
