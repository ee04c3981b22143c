#!/bin/sh
# check-report.sh renders a jikken HTML report in headless Chromium and saves a screenshot, to
# check by eye that the page (tables and embedded plots) displays as intended.
#
#   scripts/check-report.sh report.html [screenshot.png]
#
# Needs Debian's chromium (apt-get install chromium). It fails when the page does not load, when
# the DOM lacks the report's sections or images, or when the screenshot is missing.
set -eu

report=${1:?usage: scripts/check-report.sh report.html [screenshot.png]}
shot=${2:-${report%.html}.png}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "check-report: chromium not found; install it with 'apt-get install chromium'" >&2
	exit 1
fi
abs=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

# --no-sandbox because CI containers run as root; nothing but this local file is loaded.
flags="--headless=new --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=$profile --no-first-run --disable-extensions"

dom=$("$browser" $flags --dump-dom "file://$abs" 2>/dev/null)
for want in '<h1>' '<h2>Run</h2>' '<h2>Results</h2>'; do
	if ! printf '%s' "$dom" | grep -q "$want"; then
		echo "check-report: the rendered page lacks $want" >&2
		exit 1
	fi
done
figures=$(printf '%s' "$dom" | grep -o '<img src="data:image/png;base64,' | wc -l)

rm -f "$shot"
"$browser" $flags --window-size=1280,3600 --screenshot="$shot" "file://$abs" 2>/dev/null
if [ ! -s "$shot" ]; then
	echo "check-report: chromium wrote no screenshot" >&2
	exit 1
fi
echo "check-report: $report rendered with $figures embedded figure(s); screenshot in $shot"
