#!/usr/bin/env bash
# The board page in headless Chromium (browser.py; TAP on stdout).
#
# usage: tests/serve/browser.sh [SOW]     (default: build/src/cli/sow)
#
# Skipped, with a TAP SKIP line, only where no Chromium is installed;
# scripts/setup installs it with its driver and Selenium (chromium,
# chromium-driver, python3-selenium).  The Python that runs browser.py is the
# first of python3 and /usr/bin/python3 that has Selenium (Debian's package
# is for the system's Python).
SOW=$(realpath "${1:-build/src/cli/sow}")
HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null &&
    ! command -v google-chrome >/dev/null; then
    echo "1..0 # SKIP chromium is not installed (scripts/setup installs chromium, chromium-driver, python3-selenium)"
    exit 0
fi
command -v chromedriver >/dev/null || {
    echo "Bail out! chromium is installed but chromedriver is not (scripts/setup: chromium-driver)"
    exit 1
}
for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import selenium' 2>/dev/null; then
        exec "$py" "$HERE/browser.py" "$SOW"
    fi
done
echo "Bail out! chromium is installed but no python3 has Selenium (scripts/setup: python3-selenium)"
exit 1
