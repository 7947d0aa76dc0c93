#!/usr/bin/env bash
# Writes docs/CLI.md from the commands' own --help, so the page is the program's word:
#   scripts/gen-cli-doc.sh [BUILD_DIR]      (default build/; tests/py/test_docs.py checks it is current)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-$here/build}/mieb-eval"
out="$here/docs/CLI.md"
{
  echo "# The command line"
  echo
  echo "Every command's \`--help\`, as \`mieb-eval\` prints it (written by \`scripts/gen-cli-doc.sh\`)."
  echo "Options take \`--opt value\` or \`--opt=value\`; mteb's spellings with underscores"
  echo "(\`--output_folder\`) are read as the hyphenated ones."
  for cmd in "" run synth list-tasks inspect summary merge report compare parity; do
    echo
    if [ -z "$cmd" ]; then echo "## mieb-eval"; else echo "## mieb-eval $cmd"; fi
    echo
    echo '```'
    # shellcheck disable=SC2086
    "$bin" $cmd --help
    echo '```'
  done
  echo
  echo "## tools/mieb-eval-model, tools/mieb-export"
  echo
  echo "Python programs run in \`.venv-mteb\`; \`--help\` lists their options (README \"Score your model\","
  echo "\`docs/EXPORT.md\`)."
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
