"""Records a HAR of a wiki journey in real Chromium (Debian's, driven by
Playwright through the DevTools protocol), as a user would do it: open the
login page, log in, open a page's editor by its URL, type a text, save.

usage: record_wiki.py mediawiki|dokuwiki BASE_URL USERNAME PASSWORD PAGE TEXT OUT.har
"""
import sys

from playwright.sync_api import sync_playwright


def mediawiki(page, base, username, password, title, text):
    page.goto(base + "/index.php?title=Special:UserLogin")
    page.fill("#wpName1", username)
    page.wait_for_timeout(200)
    page.fill("#wpPassword1", password)
    page.click("#wpLoginAttempt")
    page.wait_for_selector("#pt-logout, #pt-userpage", state="attached")
    page.goto(base + "/index.php?title=" + title + "&action=edit")
    page.fill("#wpTextbox1", text)
    # Focusing the summary after a change makes the editor's script stash
    # the edit (an api.php POST with the CSRF token it holds in a JSON
    # string): waited for, so that every recording has it.
    with page.expect_response(
        lambda r: "api.php" in r.url and r.request.method == "POST", timeout=10000
    ):
        page.fill("#wpSummary", "recorded in Chromium")
    page.wait_for_timeout(300)
    page.click("#wpSave")
    page.wait_for_selector("#mw-content-text")
    page.wait_for_load_state()


def dokuwiki(page, base, username, password, pageid, text):
    page.goto(base + "/doku.php?id=start&do=login")
    page.fill("input[name=u]", username)
    page.wait_for_timeout(200)
    page.fill("input[name=p]", password)
    page.click("#dw__login button[type=submit]")
    page.wait_for_selector("text=Log Out")
    page.goto(base + "/doku.php?id=" + pageid + "&do=edit")
    page.fill("#wiki__text", text)
    page.wait_for_timeout(300)
    page.click("#edbtn__save")
    page.wait_for_selector("text=" + text.split("\n")[0])
    page.wait_for_load_state()


def main():
    app, base, username, password, page_name, text, out = sys.argv[1:8]
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(record_har_path=out, record_har_content="embed")
        page = context.new_page()
        {"mediawiki": mediawiki, "dokuwiki": dokuwiki}[app](
            page, base, username, password, page_name, text
        )
        context.close()
        browser.close()


if __name__ == "__main__":
    main()
