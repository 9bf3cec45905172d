"""Records a HAR of the testbed's Moodle-shaped journey in real Chromium
(Debian's, driven by Playwright through the DevTools protocol), as a user
would click through it: front page, log in, a course, its forum, a
discussion, a reply posted, log out.

usage: record_har.py BASE_URL USERNAME PASSWORD OUT.har
"""
import sys

from playwright.sync_api import sync_playwright


def main():
    base, username, password, out = sys.argv[1:5]
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(record_har_path=out, record_har_content="embed")
        page = context.new_page()
        page.goto(base + "/")
        page.wait_for_timeout(300)
        page.click("text=Log in")
        page.fill("input[name=username]", username)
        page.wait_for_timeout(200)
        page.fill("input[name=password]", password)
        page.click("#loginbtn")
        page.wait_for_selector(".usertext")
        # The course from the user's bookmark; then links, as a reader clicks.
        page.goto(base + "/course/view.php?id=2")
        page.click("li.activity.forum a >> nth=0")
        page.click("table a[href*='discuss.php'] >> nth=0")
        page.wait_for_timeout(300)
        page.click("text=Reply >> nth=0")
        page.fill("input[name=subject]", "Re: recorded in Chromium")
        page.fill("textarea[name='message[text]']", "A reply typed in a real browser.")
        page.click("button[name=submitbutton]")
        page.wait_for_load_state()
        page.wait_for_timeout(200)
        page.click("text=Log out")
        page.wait_for_selector("text=You are not logged in")
        context.close()
        browser.close()


if __name__ == "__main__":
    main()
