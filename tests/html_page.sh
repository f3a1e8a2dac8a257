#!/bin/sh
# html_page.sh TEC WORKDIR — tec_html's page (`tec print --html`) of a conv template's function,
# loaded in headless Chromium: its script runs and reports three panes and every loop's link
# resolving; the hot loop (the innermost one with the most work) links to an assembly block
# holding its FMA instructions (vfmadd on the host); for rasp4b the same block holds fmla;
# bad input (an unwritable path, an unknown target) refused with the reason. Run by ctest
# (html_page). Without chromium: skipped (77), except under CI=true, where it is a failure.
set -u
tec=$1 dir=$2
mkdir -p "$dir" && cd "$dir" || exit 1
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  if [ "${CI:-}" = true ]; then echo "html_page: chromium is missing (scripts/dev test installs it)"; exit 1; fi
  echo "html_page: skipped, no chromium (apt-get install chromium)"; exit 77
fi
fail=0
err() { echo "html_page: $*"; fail=1; }
conv="conv2d_nchwc --shape c=16,h=10,w=9,oc=16,k=3,pad=1,in=NCHW8c,out=NCHW8c,act=relu"
# the block a page's hot loop links to, one instruction per line (the page's <div>s split)
hot_block() {
  id=$(grep -o '<summary class="hot">[^<]*\(<span[^>]*>[^<]*</span>\)*<a class="go" href="#a[0-9]*"' "$1" | grep -o '#a[0-9]*' | tr -d '#')
  [ -n "$id" ] || { echo "(no hot loop link)"; return; }
  sed 's/<div class="b/\n&/g' "$1" | grep "^<div class=\"b[ a-z]*\" id=\"$id\"" | head -1 | sed 's/<\/div>/\n/g'
}
for t in host rasp4b; do
  topt=""; [ $t = rasp4b ] && topt="--target rasp4b"
  "$tec" print $conv $topt --html "$t.html" > "$t.txt" 2> "$t.err" || { err "$t: tec print --html failed: $(cat "$t.err")"; continue; }
  grep -q "wrote $t.html" "$t.err" || err "$t: no 'wrote' line"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --dump-dom "file://$PWD/$t.html" \
    > "$t.dom" 2> "$t.browser.err" || { err "$t: chromium failed: $(tail -3 "$t.browser.err")"; continue; }
  check=$(grep -o '<div id="check">[^<]*' "$t.dom" | sed 's/.*>//')
  case "$check" in
    "panes 3, loops "*) ;;
    *) err "$t: the page's script did not report three panes: '$check'" ;;
  esac
  loops=$(echo "$check" | sed -n 's/.*loops \([0-9]*\),.*/\1/p')
  links=$(echo "$check" | sed -n 's/.*links \([0-9]*\)\/\([0-9]*\).*/\1 \2/p')
  [ -n "$loops" ] && [ "$loops" -ge 8 ] || err "$t: $loops foldable loops (the program has more than 8)"
  set -- $links
  [ $# -eq 2 ] && [ "$1" = "$2" ] && [ "$1" -ge 8 ] || err "$t: links resolved: '$links'"
  fma=vfmadd; [ $t = rasp4b ] && fma=fmla
  hot_block "$t.dom" | grep -q "$fma" || err "$t: the hot loop's assembly block has no $fma: $(hot_block "$t.dom" | head -5)"
  grep -q '<summary class="hot">[^<]*for (conv\.' "$t.dom" || err "$t: the hot loop is not a loop of conv"
  grep -q 'id="ir"' "$t.dom" && grep -q 'id="asm"' "$t.dom" && grep -q 'id="program"' "$t.dom" || err "$t: a pane is missing"
  grep -q 'data-line="[0-9]*">  %' "$t.dom" || grep -q '<div data-line="[0-9]*">' "$t.dom" || err "$t: no IR line is linked to a loop"
done
# bad input
"$tec" print $conv --html /nonexistent-dir/x.html > /dev/null 2> bad.err && err "an unwritable path was accepted"
grep -q "tec_html: cannot write /nonexistent-dir/x.html" bad.err || err "unwritable path: $(cat bad.err)"
"$tec" print $conv --target nosuch --html x.html > /dev/null 2> bad2.err && err "an unknown target was accepted"
grep -q "nosuch" bad2.err || err "unknown target: $(cat bad2.err)"
"$tec" bench $conv --html x.html > /dev/null 2> bad3.err && err "--html with bench was accepted"
grep -q -- "--html is an option of tec print" bad3.err || err "bench --html: $(cat bad3.err)"
[ $fail -eq 0 ] && echo "html_page: host and rasp4b pages checked in $("$browser" --version 2>/dev/null | head -1)"
exit $fail
