"""Visits pages one after another in one headless Chromium (Debian's), as a
user clicking from page to page: the browser's cache carries over.

    page_visits.py BASE_URL PATH [PATH ...]

Prints one line per page: the path and how long its load took (ms).
"""
import sys
import time

from playwright.sync_api import sync_playwright


def main():
    base, paths = sys.argv[1], sys.argv[2:]
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"]
        )
        page = browser.new_context().new_page()
        for path in paths:
            start = time.monotonic()
            page.goto(base + path, wait_until="networkidle")
            print(f"{path} {1000 * (time.monotonic() - start):.0f}", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
