"""Visits pages one after another in one headless Chromium (Debian's), as a
user clicking from page to page: the browser's cache carries over.

    page_visits.py [--read SECONDS] [--agent USER_AGENT] BASE_URL PATH [PATH ...]

With --read, the user reads each page that long before the next one; with
--agent, the browser sends that User-Agent (students told apart in a log).
A PATH written `form:/wp-login.php#log=student1&pwd=secret` is a form sent:
the page is loaded, the named fields filled, and the form sent with Enter
in the last one (the page it leads to loaded).
Prints one line per page: the path and how long its load took (ms).
"""
import sys
import time
from urllib.parse import parse_qsl

from playwright.sync_api import sync_playwright


def main():
    args = sys.argv[1:]
    read = 0.0
    agent = None
    while args[0] in ("--read", "--agent"):
        if args[0] == "--read":
            read = float(args[1])
        else:
            agent = args[1]
        args = args[2:]
    base, paths = args[0], args[1:]
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"]
        )
        context = browser.new_context(user_agent=agent) if agent else browser.new_context()
        page = context.new_page()
        for path in paths:
            start = time.monotonic()
            if path.startswith("form:"):
                path, _, fields = path[len("form:"):].partition("#")
                page.goto(base + path, wait_until="networkidle")
                last = None
                for name, value in parse_qsl(fields):
                    last = f'[name="{name}"]'
                    page.fill(last, value)
                with page.expect_navigation(wait_until="networkidle"):
                    page.press(last, "Enter")
            else:
                page.goto(base + path, wait_until="networkidle")
            print(f"{path} {1000 * (time.monotonic() - start):.0f}", flush=True)
            time.sleep(read)
        browser.close()


if __name__ == "__main__":
    main()
