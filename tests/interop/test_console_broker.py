"""The console with a real Apache Kafka 4.3.1 broker on our controller: the record tail
shows the broker's RegisterBrokerRecord and the image its registration (unfenced, its
epoch and endpoint) and a topic's partition leaders and ISR, in headless Chromium.
One broker JVM: about 12 s.

``KRAFT_CONSOLE_SCREENSHOT=PATH`` saves the page there (the picture in docs/console.md)."""
from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from tests.support.browser import attrs, headless_chromium, texts, wait_page
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import BROKER_ID_BASE, start_brokers
from tests.support.kraft_nodes import OurNode
from tools.kafka_dist.controller import free_port, random_cluster_id, run_tool

pytestmark = pytest.mark.java


def test_a_kafka_brokers_registration_and_topic_on_the_page(tmp_path):
    need_jdk()
    cluster_id = random_cluster_id()
    (tmp_path / "ours").mkdir()
    port = free_port()
    node = OurNode(tmp_path / "ours", node_id=1, extra=(f"kraft.console.listener=127.0.0.1:{port}",))
    node.format_with_ours(cluster_id)
    node.start()
    brokers, browser = [], None
    try:
        node.wait_leader()
        brokers = start_brokers(tmp_path, 1, cluster_id, node.bootstrap)
        out = run_tool("kafka-topics", "--bootstrap-server", brokers[0].bootstrap, "--create", "--topic",
                       "orders", "--partitions", "3", "--replication-factor", "1", timeout=120, check=False)
        assert out.returncode == 0, out.stdout + out.stderr
        browser = headless_chromium(1400, 1500)
        browser.get(f"http://127.0.0.1:{port}/")
        broker_id = str(BROKER_ID_BASE)
        wait_page(browser, lambda b: broker_id in attrs(b, "#brokers tbody tr", "data-id"), 30,
                  "the broker in the image")
        wait_page(browser, lambda b: texts(b, "#brokers tbody tr td:nth-child(3)") == ["unfenced"], 30,
                  "the broker unfenced")
        assert brokers[0].bootstrap in texts(browser, "#brokers tbody td:nth-child(4)")[0]
        rows = wait_page(browser, lambda b: (lambda r: r if len(r) == 3 else None)(
            [t for t in texts(b, "#topics tbody tr") if t.startswith("orders")]), 30, "three partitions")
        leaders = texts(browser, "#topics tbody tr td:nth-child(3)")
        assert leaders == [broker_id] * 3, rows
        assert texts(browser, "#topics tbody tr td:nth-child(6)") == [broker_id] * 3  # ISR
        # the tail kept the registration: the broker registered after the page's node started
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select
        wait_page(browser, lambda b: "RegisterBrokerRecord" in attrs(b, "#record-type option", "value"), 30,
                  "RegisterBrokerRecord among the record types")
        Select(browser.find_element(By.ID, "record-type")).select_by_value("RegisterBrokerRecord")
        fields = wait_page(browser, lambda b: texts(b, "#records tbody tr td:last-child"), 5, "the record")
        assert f'"brokerId":{broker_id}' in fields[0]
        Select(browser.find_element(By.ID, "record-type")).select_by_value("")
        shot = os.environ.get("KRAFT_CONSOLE_SCREENSHOT")
        if shot:  # the whole page at 70 %: a small PNG
            size = browser.execute_script("return [document.body.scrollWidth, document.body.scrollHeight]")
            png = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": {
                "x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 0.7}})["data"]
            Path(shot).write_bytes(base64.b64decode(png))
    finally:
        if browser is not None:
            browser.quit()
        for b in brokers:
            b.close()
        node.kill()
