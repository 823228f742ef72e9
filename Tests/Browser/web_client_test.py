"""The reference web client (/ui/) in a real browser: headless Chromium driven by Selenium.

Run by scripts/browser-test.sh, which starts navd and passes its URL. As a person would: open
/ui/, create a session, click a link button, see the stage change, open a second window on the
same session and see it attached, act in the first window and see the second follow without a
reload, see a refused path explained next to the path bar, open tabs and a modal, and see the
diagram mark the top screen's scene. Steps run in order (each builds on the one before); the
first failure stops the run with the page's state and a screenshot.

    python web_client_test.py --url http://127.0.0.1:PORT [--screenshots DIR] [--artifacts DIR]
"""

import argparse
import os
import re
import sys
import time
import traceback

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

WAIT = 8  # seconds for anything the page must show

# What navd does not serve yet, and the checks that wait for it: each is printed as PENDING
# (never as passed) until its entry is removed here.
PENDING = {}


def browser(chromium, chromedriver):
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in containers and CI
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1440,1000",
        "--force-device-scale-factor=1",
        "--hide-scrollbars",
        "--lang=en-US",
        # Hidden windows keep running timers and streams as a visible one would.
        "--disable-background-timer-throttling",
        "--disable-renderer-backgrounding",
        "--disable-backgrounding-occluded-windows",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)


class Failure(Exception):
    pass


class Page:
    """One browser window on the client, with waits that say what they waited for.

    The client redraws parts of the page whenever a view, an event or a refusal arrives, so an
    element found a moment ago may be gone when it is read ("stale"). Every read and every action
    here goes through `settled`, which does it again on the element as it is now; steps read the
    page only through these methods.
    """

    def __init__(self, driver, handle):
        self.driver = driver
        self.handle = handle

    def focus(self):
        self.driver.switch_to.window(self.handle)
        return self

    @staticmethod
    def settled(read, tries=40):
        """`read()`, again while the page replaces what it found (50 ms apart, up to 2 s)."""
        for _ in range(tries - 1):
            try:
                return read()
            except StaleElementReferenceException:
                time.sleep(0.05)
        return read()

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def until(self, what, condition, timeout=WAIT):
        try:
            return WebDriverWait(
                self.driver, timeout, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException,)
            ).until(lambda _: condition())
        except TimeoutException:
            raise Failure(f"timed out after {timeout}s waiting for {what}") from None

    def click(self, css):
        """Clicks the element `css` names once it is in the middle of the window (clear of the sticky bars)."""

        def press():
            element = self.find(css)
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
            element.click()

        self.settled(press)

    def text(self, css):
        return self.settled(lambda: next((element.text for element in self.all(css)), None))

    def attribute(self, css, name):
        return self.settled(lambda: self.find(css).get_attribute(name))

    def attributes(self, css, *names):
        """The attributes `names` of every element `css` names, in document order."""
        return self.settled(lambda: [tuple(element.get_attribute(name) for name in names) for element in self.all(css)])

    def displayed(self, css):
        return self.settled(lambda: self.find(css).is_displayed())

    def enabled(self, css):
        return self.settled(lambda: any(element.is_enabled() for element in self.all(css)))

    def path(self):
        return self.text("#current-path")

    def until_path(self, expected):
        self.until(f"the path to read {expected!r} (it reads {self.path()!r})", lambda: self.path() == expected)

    def cards(self):
        """(scene, screen id) of every card, root to top, in document order."""
        return self.attributes("#stage .card", "data-scene", "data-screen")

    def top_card(self):
        return next((scene for (scene,) in self.attributes("#stage .card-top", "data-scene")), None)

    def link(self, name, **params):
        """Clicks the button of link `name`, filling its params' inputs first."""
        selector = f'#actions [data-link="{name}"]'
        self.until(f"a button for link {name!r}", lambda: self.all(selector))
        if self.settled(lambda: self.find(selector).tag_name) != "form":
            if params:
                raise Failure(f"link {name!r} takes no params, but the test gave {params}")
            self.click(selector)
            return

        def fill():
            for param, value in params.items():
                field = self.find(f'{selector} input[name="{param}"]')
                field.clear()
                field.send_keys(str(value))

        self.settled(fill)
        self.click(f"{selector} button[type=submit]")

    def go(self, path):
        def fill():
            field = self.find("#path-input")
            field.clear()
            field.send_keys(path)

        self.settled(fill)
        self.click("#path-go")

    def timeline_types(self):
        return [kind for (kind,) in self.attributes("#timeline .tl-event", "data-type")]


def run(url, screenshots, artifacts, chromium, chromedriver):
    driver = browser(chromium, chromedriver)
    passed = []
    pending = []
    steps = None
    name = "starting the browser"
    try:
        steps = Steps(driver, url, screenshots, chromium, chromedriver)
        for step, needs in steps.plan():
            name = step.__name__.replace("_", " ")
            if needs in PENDING:
                pending.append(name)
                print(f"  PENDING {name}: needs {PENDING[needs]}", flush=True)
                continue
            started = time.monotonic()
            step()
            passed.append(name)
            print(f"  ok   {name} ({time.monotonic() - started:.1f}s)", flush=True)
        return passed, pending, None
    except Exception as error:  # noqa: BLE001 - any failure is reported with the page's state
        detail = error if isinstance(error, Failure) else "".join(traceback.format_exception(error))
        print(f"  FAIL {name}: {detail}", flush=True)
        print(f"       at {driver.current_url}", flush=True)
        try:
            for entry in driver.get_log("browser")[-20:]:
                print(f"       console: {entry.get('level')} {entry.get('message')}", flush=True)
            if artifacts:
                os.makedirs(artifacts, exist_ok=True)
                shot = os.path.join(artifacts, "browser-test-failure.png")
                driver.save_screenshot(shot)
                print(f"       screenshot: {shot}", flush=True)
        except Exception:  # noqa: BLE001 - the report is best effort
            pass
        return passed, pending, name
    finally:
        if steps is not None and steps.other is not None:
            steps.other.quit()
        driver.quit()


class Steps:
    def __init__(self, driver, url, screenshots, chromium, chromedriver):
        self.driver = driver
        self.chromium = chromium
        self.chromedriver = chromedriver
        self.other = None
        self.url = url.rstrip("/")
        self.screenshots = screenshots
        self.first = None
        self.second = None
        self.session = None

    def plan(self):
        """Each step, with what it needs that may be PENDING."""
        return [
            (self.the_start_page_lists_the_servers_graphs, None),
            (self.creating_a_session_puts_its_id_in_the_address_and_draws_its_stage, None),
            (self.a_link_button_with_a_param_changes_the_stage, None),
            (self.a_refused_path_is_explained_next_to_the_path_bar, None),
            (self.a_second_window_on_the_same_address_attaches_to_the_session, None),
            (self.the_second_window_follows_the_first_without_a_reload, "live"),
            (self.back_and_exit_follow_the_actions, None),
            (self.a_login_resumes_the_deep_link_it_interrupted, None),
            (self.a_form_with_unsaved_text_asks_before_it_is_left, None),
            (self.tabs_and_a_modal_are_drawn_as_such, None),
            (self.the_diagram_marks_the_top_screens_scene, "diagram"),
            (self.the_traffic_panel_counts_views_with_the_admin_token, None),
            (self.the_history_slider_shows_the_stage_at_a_past_version, None),
            (self.a_reload_keeps_the_session, None),
            (self.another_browser_with_the_watch_token_follows_read_only, None),
            (self.a_browser_with_only_the_write_token_follows_too, None),
            (self.ending_the_session_ends_it_in_every_window, None),
            (self.no_script_error_or_policy_violation_was_logged, None),
        ]

    def follow(self, path):
        """The second window shows `path` too, once the stream is there (PENDING "live")."""
        if "live" in PENDING:
            return
        self.second.focus().until_path(path)
        self.first.focus()

    def shot(self, name, height=None):
        """Saves ui-NAME.png (with --screenshots), the window `height` tall, scrolled to the top."""
        if not self.screenshots:
            return
        os.makedirs(self.screenshots, exist_ok=True)
        size = self.driver.get_window_size()
        if height:
            self.driver.set_window_size(size["width"], height)
        self.driver.execute_script("window.scrollTo(0, 0)")
        time.sleep(0.2)
        self.driver.save_screenshot(os.path.join(self.screenshots, f"ui-{name}.png"))
        if height:
            self.driver.set_window_size(size["width"], size["height"])

    def the_start_page_lists_the_servers_graphs(self):
        self.driver.get(self.url + "/ui")  # the slashless address redirects
        self.first = Page(self.driver, self.driver.current_window_handle)
        page = self.first
        page.until("the page at /ui/", lambda: self.driver.current_url.endswith("/ui/"))
        page.until("the start form", lambda: page.displayed("#start-view"))
        page.until("the graph list", lambda: page.all('#create-graph option[value="news"]'))
        if page.displayed("#session-view"):
            raise Failure("the session view shows before any session")

    def creating_a_session_puts_its_id_in_the_address_and_draws_its_stage(self):
        page = self.first
        self.shot("start")
        page.click("#create-button")
        page.until("an id in the address", lambda: re.search(r"/ui/#[0-9a-f]{32}$", self.driver.current_url))
        self.session = self.driver.current_url.rsplit("#", 1)[1]
        page.until_path("/top")
        page.until("the version", lambda: page.text("#current-version") == "v1")
        if page.cards() != [("top", "e1")]:
            raise Failure(f"cards: {page.cards()}")
        stored = self.driver.execute_script("return JSON.parse(localStorage.getItem('navd.sessions'))[arguments[0]]", self.session)
        if not stored or not stored.get("token"):
            raise Failure(f"no token kept for the session: {stored}")
        if stored["token"] in self.driver.current_url:
            raise Failure("the write token is in the address")
        page.until("the opening transition in the timeline", lambda: "transitionEnd" in page.timeline_types())

    def a_link_button_with_a_param_changes_the_stage(self):
        page = self.first
        page.link("news", category=3)
        page.until_path("/top/list_news(category=3)")
        if page.cards() != [("top", "e1"), ("list_news", "e2")]:
            raise Failure(f"cards: {page.cards()}")
        if page.top_card() != "list_news":
            raise Failure(f"top card: {page.top_card()}")
        if page.text("#current-version") != "v2":
            raise Failure(f"version: {page.text('#current-version')}")
        shown = page.settled(lambda: [(param.find_element(By.TAG_NAME, "dt").text, param.find_element(By.TAG_NAME, "dd").text) for param in page.all("#stage .card-top .param")])
        if shown != [("category", "3")]:
            raise Failure(f"the top card's params: {shown}")
        page.until("awake list_news in the timeline", lambda: page.all('#timeline .tl-awake'))

    def a_refused_path_is_explained_next_to_the_path_bar(self):
        page = self.first
        page.go("list_news(")
        page.until("the refusal", lambda: page.displayed("#refusal"))
        code = page.text("#refusal .refusal-code")
        if code != "invalid_path":
            raise Failure(f"refusal code: {code!r}")
        if not page.all("#refusal mark"):
            raise Failure("the offset is not marked")
        if page.attribute("#path-input", "aria-invalid") != "true":
            raise Failure("the path field is not marked invalid")
        page.go("nowhere")
        page.until("unknown_scene", lambda: page.text("#refusal .refusal-code") == "unknown_scene")
        page.until_path("/top/list_news(category=3)")  # a refusal changes nothing
        if page.text("#current-version") != "v2":
            raise Failure("a refusal changed the version")
        alerts = self.driver.execute_script("return typeof window.alert")  # still the browser's own
        if alerts != "function":
            raise Failure("window.alert was replaced")

    def a_second_window_on_the_same_address_attaches_to_the_session(self):
        self.driver.switch_to.new_window("window")
        self.second = Page(self.driver, self.driver.current_window_handle)
        self.driver.get(f"{self.url}/ui/#{self.session}")
        page = self.second
        page.until_path("/top/list_news(category=3)")
        if page.cards() != [("top", "e1"), ("list_news", "e2")]:
            raise Failure(f"second window's cards: {page.cards()}")
        if page.attribute("#session-id", "data-id") != self.session:
            raise Failure("the second window shows another session")
        page.focus()

    def the_second_window_follows_the_first_without_a_reload(self):
        other = self.second.focus()
        other.until("the second window's stream", lambda: other.attribute("#live", "data-status") == "live")
        marker = self.driver.execute_script("window.__notReloaded = 1; return 1")
        page = self.first.focus()
        page.link("show", id=7)
        page.until_path("/top/list_news(category=3)/show_news(id=7)")
        other = self.second.focus()
        other.until_path("/top/list_news(category=3)/show_news(id=7)")
        if other.top_card() != "show_news":
            raise Failure(f"second window's top card: {other.top_card()}")
        other.until("show_news's events in the second window", lambda: other.all('#timeline .tl-awake'))
        if self.driver.execute_script("return window.__notReloaded") != marker:
            raise Failure("the second window reloaded")

    def back_and_exit_follow_the_actions(self):
        page = self.first.focus()
        if page.path() != "/top/list_news(category=3)/show_news(id=7)":  # the step before is pending
            page.link("show", id=7)
            page.until_path("/top/list_news(category=3)/show_news(id=7)")
        page.until("Back enabled", lambda: page.enabled("#back"))
        page.click("#back")
        page.until_path("/top/list_news(category=3)")
        self.follow("/top/list_news(category=3)")
        page.until("Exit enabled", lambda: page.enabled("#exit"))
        page.click("#exit")
        page.until_path("/top")
        page.until("Back disabled at the root", lambda: not page.enabled("#back"))
        page.until("Exit disabled at the root", lambda: not page.enabled("#exit"))

    def change_context(self, page, patch):
        if not page.displayed("#context-input"):
            page.click(".context summary")
        page.until("the context form", lambda: page.displayed("#context-input"))
        page.settled(lambda: page.find("#context-input").clear())
        page.settled(lambda: page.find("#context-input").send_keys(patch))
        page.click("#context-go")

    def a_login_resumes_the_deep_link_it_interrupted(self):
        page = self.first.focus()
        self.change_context(page, '{"user": null}')
        page.until("the context without a user", lambda: '"user"' not in (page.text("#session-context") or '"user"'))
        page.go("^/top/settings")
        page.until_path("/top!login")
        page.until("the pending deep link", lambda: page.displayed("#current-pending") and page.text("#pending-path") == "/top/settings")
        self.follow("/top!login")
        self.change_context(page, '{"user": "ann"}')
        page.until_path("/top/settings")
        page.until("nothing pending", lambda: not page.displayed("#current-pending"))
        page.until("contextChanged in the timeline", lambda: "contextChanged" in page.timeline_types())
        self.follow("/top/settings")

    def a_form_with_unsaved_text_asks_before_it_is_left(self):
        page = self.first.focus()
        page.go("^/top/edit_profile")
        page.until_path("/top/edit_profile")
        selector = '#actions [data-command="type"]'
        page.until("the form's commands", lambda: page.all(selector))
        page.settled(lambda: page.find(f'{selector} input[name="text"]').send_keys("draft"))
        page.click(f"{selector} button[type=submit]")
        page.until("the typed text in the state", lambda: "draft" in (page.text("#stage .card-top") or ""))
        page.click("#back")
        page.until("the question", lambda: page.text("#refusal .refusal-code") == "confirmation_required")
        page.until_path("/top/edit_profile")  # asking changed nothing
        page.click("#confirm-leave")
        page.until_path("/top")
        self.follow("/top")
        # A command whose guard does not hold is refused where refusals are shown.
        page.go("^/top/edit_profile")
        page.until_path("/top/edit_profile")
        page.until("the save command", lambda: page.all('#actions [data-command="save"]'))
        page.click('#actions [data-command="save"]')
        page.until("command_refused", lambda: page.text("#refusal .refusal-code") == "command_refused")
        page.go("^/top")
        page.until_path("/top")

    def tabs_and_a_modal_are_drawn_as_such(self):
        page = self.first.focus()
        page.go("^/top/home#profile/show_friend(name=ann)")
        page.until_path("/top/home#profile/show_friend(name=ann)")
        page.go("^/top/home#friend")
        page.until_path("/top/home#friend")
        page.until("the tab bar with friend selected", lambda: page.text("#stage .tabbar .tab-selected") == "friend")
        tabs = [tab for (tab,) in page.attributes("#stage .tabbar .tab", "data-tab")]
        if tabs != ["friend", "profile"]:
            raise Failure(f"tabs: {tabs}")
        page.until("profile's saved stack", lambda: page.all('#stage .saved-stack[data-tab="profile"]'))
        if not page.all("#stage .card-tabs .tab-content .card-tab"):
            raise Failure("the selected tab's screen is not inside the tab bar's card")
        page.link("login")
        page.until_path("/top/home#friend!login")
        page.until("a modal layer", lambda: page.all("#stage .layer-modal"))
        if page.attribute("#stage .layer-modal .card-top", "data-scene") != "login":
            raise Failure("login is not the modal's top card")
        if not page.all("#stage .layer-app.layer-covered"):
            raise Failure("the app under the modal is not drawn as covered")
        if page.displayed("#refusal"):
            raise Failure(f"a note after an applied change: {page.text('#refusal')!r}")
        self.follow("/top/home#friend!login")
        page.click("#exit")
        page.until_path("/top/home#friend")
        if page.all("#stage .layer-modal"):
            raise Failure("the modal is still drawn after exit")

    def the_traffic_panel_counts_views_with_the_admin_token(self):
        page = self.first.focus()
        page.find("#traffic-token").send_keys("browser-test-admin-token")
        page.click("#traffic-form button")
        # The session has viewed show_coupon (the last step before) and top (its creation).
        page.until("the views by scene", lambda: page.all('#traffic .traffic-scenes li[data-scene="show_coupon"]'))
        if not page.all('#traffic .traffic-scenes li[data-scene="top"]'):
            raise Failure("the creation's view of top is not counted")
        if not page.all("#traffic .traffic-edges li"):
            raise Failure("no moves between scenes are listed")
        # The same counts drawn on the graph, the session's scene still marked.
        page.until("the diagram with views", lambda: page.all('#diagram svg .scene[data-scene="show_coupon"][data-views]'))
        views = page.attribute('#diagram svg .scene[data-scene="show_coupon"]', "data-views")
        if not views or int(views) < 1:
            raise Failure(f"show_coupon's views on the diagram: {views!r}")
        page.until("the current scene marked on it", lambda: page.all("#diagram svg .scene.current"))
        # Followed edges are drawn wider (their width set by script: the policy refuses style attributes).
        widths = self.driver.execute_script(
            "return [...document.querySelectorAll('#diagram svg [data-pen]')].map((node) => node.style.strokeWidth)")
        if not widths or not all(width.endswith("px") for width in widths):
            raise Failure(f"the followed edges' pens: {widths!r}")

    def the_history_slider_shows_the_stage_at_a_past_version(self):
        page = self.first.focus()
        now, version = page.path(), page.text("#current-version")
        page.until("the history slider", lambda: page.displayed("#history-slider") and page.enabled("#history-slider"))
        slider = page.find("#history-slider")
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
        # The keyboard moves a range input as a drag does: Home to the oldest, then one step on.
        slider.send_keys(Keys.HOME)
        page.until_path("/top")
        if page.cards() != [("top", "e1")]:
            raise Failure(f"cards at version 1: {page.cards()}")
        slider.send_keys(Keys.ARROW_RIGHT)
        page.until_path("/top/list_news(category=3)")
        if page.cards() != [("top", "e1"), ("list_news", "e2")]:
            raise Failure(f"cards at version 2: {page.cards()}")
        page.until("the change that made version 2", lambda: page.text("#history-at .history-change") == "link news(category=3)")
        if not page.text("#current-version").startswith("v2 of "):
            raise Failure(f"the version reads {page.text('#current-version')!r}")
        if any(element.is_enabled() for element in page.all("#actions button")):
            raise Failure("a past version offers buttons that would change the session now")
        page.click("#history-now")
        page.until_path(now)
        page.until("the version now", lambda: page.text("#current-version") == version)

    def the_diagram_marks_the_top_screens_scene(self):
        page = self.first.focus()
        page.until("the diagram", lambda: page.all("#diagram svg"))
        page.until("friend marked current", lambda: page.all('#diagram svg .scene.current[data-scene="friend"]'))
        # A modal with its own navigation stack, two screens deep.
        page.go("!/list_coupon/show_coupon(id=88)")
        page.until_path("/top/home#friend!/list_coupon/show_coupon(id=88)")
        page.until("show_coupon marked current", lambda: page.all('#diagram svg .scene.current[data-scene="show_coupon"]'))
        if len(page.all("#diagram svg .scene.current")) != 1:
            raise Failure("more than one scene is current")
        # Drawn so, by the diagram's own stylesheet (which the page's policy must let in).
        fills = self.driver.execute_script(
            "const fill = (s) => getComputedStyle(document.querySelector(`#diagram svg .scene[data-scene='${s}'] rect`)).fill;"
            "return [fill('show_coupon'), fill('help')]"
        )
        if fills[0] == fills[1]:
            raise Failure(f"the current scene is not drawn differently: fill {fills[0]}")
        if "own navigation" not in page.text("#stage .layer-modal .layer-caption").lower():
            raise Failure("the modal's own navigation stack is not shown")
        scenes = [scene for (scene,) in page.attributes("#stage .layer-modal .card", "data-scene")]
        if scenes != ["list_coupon", "show_coupon"]:
            raise Failure(f"the modal's cards: {scenes}")
        self.follow("/top/home#friend!/list_coupon/show_coupon(id=88)")
        self.shot("session", height=1560)

    def a_reload_keeps_the_session(self):
        expected = self.first.focus().path()
        page = self.second.focus()
        self.driver.refresh()
        page.until_path(expected)
        if page.attribute("#session-id", "data-id") != self.session:
            raise Failure("a reload lost the session")

    def another_browser_with_the_watch_token_follows_read_only(self):
        stored = self.first.focus().driver.execute_script("return JSON.parse(localStorage.getItem('navd.sessions'))[arguments[0]]", self.session)
        self.tokens = stored
        if not stored.get("watchToken"):
            raise Failure(f"no watch token kept: {stored}")
        # A browser of its own: nothing in its localStorage.
        self.other = browser(self.chromium, self.chromedriver)
        other = Page(self.other, self.other.current_window_handle)
        self.other.get(f"{self.url}/ui/#{self.session}")
        other.until("the attach form, asking for a token", lambda: other.displayed("#start-error"))
        if other.attribute("#attach-id", "value") != self.session:
            raise Failure("the attach form does not hold the address's session id")
        other.settled(lambda: other.find("#attach-token").send_keys(stored["watchToken"]))
        other.click("#attach-kind-watch")
        other.click('#attach-form button[type="submit"]')
        expected = self.first.path()
        other.until_path(expected)
        if other.text("#session-mode") != "read-only":
            raise Failure(f"mode: {other.text('#session-mode')!r}")
        if other.enabled("#path-go") or other.enabled("#actions button"):
            raise Failure("a read-only window offers changes")
        other.until("the read-only window's stream", lambda: other.attribute("#live", "data-status") == "live")
        self.first.focus().go("..")
        self.first.until_path("/top/home#friend!/list_coupon")
        other.until_path("/top/home#friend!/list_coupon")
        self.other_page = other

    def a_browser_with_only_the_write_token_follows_too(self):
        other = self.other_page
        self.other.execute_script(
            "localStorage.setItem('navd.sessions', JSON.stringify({[arguments[0]]: {token: arguments[1]}}))", self.session, self.tokens["token"]
        )
        self.other.refresh()
        other.until_path("/top/home#friend!/list_coupon")
        if other.text("#session-mode") != "read-write":
            raise Failure(f"mode: {other.text('#session-mode')!r}")
        other.until("the stream read with the token in a header", lambda: other.attribute("#live", "data-status") == "live")
        self.first.focus().go("..")
        self.first.until_path("/top/home#friend")
        other.until_path("/top/home#friend")

    def ending_the_session_ends_it_in_every_window(self):
        page = self.first.focus()
        page.click("#delete-session")
        page.until("the button armed", lambda: page.attribute("#delete-session", "data-armed") == "1")
        page.click("#delete-session")
        page.until("the first window showing the end", lambda: page.displayed("#ended"))
        for other, label in ((self.second.focus(), "the second window"), (self.other_page, "the other browser")):
            other.until(f"{label} showing the end", lambda: other.displayed("#ended"))
            if other.text("#ended-reason") != "deleted":
                raise Failure(f"{label}: reason {other.text('#ended-reason')!r}")
        self.other.quit()
        self.other = None

    def no_script_error_or_policy_violation_was_logged(self):
        # Refused requests (4xx) are logged by the browser too; those are expected here.
        bad = [
            entry["message"]
            for entry in self.driver.get_log("browser")
            if entry.get("level") == "SEVERE" and "Failed to load resource" not in entry.get("message", "")
        ]
        if bad:
            raise Failure("the console logged: " + " | ".join(bad[:5]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--screenshots", help="save the client's screenshots (ui-*.png) here")
    parser.add_argument("--artifacts", help="save a screenshot of a failure here")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--chromedriver", default=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    arguments = parser.parse_args()
    started = time.monotonic()
    passed, pending, failed = run(arguments.url, arguments.screenshots, arguments.artifacts, arguments.chromium, arguments.chromedriver)
    print(f"browser test took {time.monotonic() - started:.1f}s; {len(pending)} pending")
    print(f"browser: {len(passed)} passed, {1 if failed else 0} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
