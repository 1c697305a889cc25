"""`agentsweep view`: a local web viewer for run directories (see docs/view.md).

    index.py    byte-offset index of the JSONL files, kept in RUN_DIR/.view/index.npz
    query.py    the episode list: filter, sort, page, text search, progress figures
    server.py   the aiohttp app and its JSON endpoints
    export.py   a static, self-contained copy (`--export DIR`)
    static/     the single page: index.html, app.js, episode.js, app.css (plain JS, no CDN)
"""
