#!/usr/bin/env bash
# Builds and tests examples/outside-app, an application outside this build (Spring Boot's BOM, tumbler-bom, the
# starter), on Spring Boot 3.5.7 and on 4.0.7, against what `mvn install` put in the local repository.
#
#   mvn -B -ntp install -DskipTests && scripts/outside-app.sh [MAVEN_ARGS...]
#
# Prints each build's result and what the application's test saw (Boot's version, /actuator/health/tumbler).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target
status=0
for boot in 3.5.7 4.0.7; do
  echo "== outside-app on Spring Boot $boot"
  if mvn -B -ntp -f examples/outside-app -Dspring-boot.version="$boot" "$@" verify > "target/outside-app-$boot.log" 2>&1; then
    echo "   BUILD SUCCESS"
  else
    echo "   BUILD FAILURE (log: target/outside-app-$boot.log)"
    status=1
  fi
  grep -E "^Spring Boot |/actuator/|Tests run:.*Fail" "target/outside-app-$boot.log" | sed 's/^/   /' || true
done
exit $status
