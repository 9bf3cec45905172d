"""Visits pages one after another in one headless Chromium (Debian's), as a
user clicking from page to page: the browser's cache carries over.

    page_visits.py [--read SECONDS] BASE_URL PATH [PATH ...]

With --read, the user reads each page that long before the next one.
Prints one line per page: the path and how long its load took (ms).
"""
import sys
import time

from playwright.sync_api import sync_playwright


def main():
    args = sys.argv[1:]
    read = 0.0
    if args[0] == "--read":
        read, args = float(args[1]), args[2:]
    base, paths = args[0], args[1:]
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"]
        )
        page = browser.new_context().new_page()
        for path in paths:
            start = time.monotonic()
            page.goto(base + path, wait_until="networkidle")
            print(f"{path} {1000 * (time.monotonic() - start):.0f}", flush=True)
            time.sleep(read)
        browser.close()


if __name__ == "__main__":
    main()
