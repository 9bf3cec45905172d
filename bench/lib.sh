# Shared by the bench scripts: installs missing tools, builds headroom, and
# starts a private nginx (one worker on core 0, access log off).
# Source it; then call `bench_start_nginx PORT DIR` inside the namespace.

bench_install() {
  local need=()
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
  command -v wrk >/dev/null || need+=(wrk)
  [ -x /usr/bin/time ] || need+=(time)
  command -v bc >/dev/null || need+=(bc)
  if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]} ..." >&2
    apt-get -o DPkg::Lock::Timeout=1200 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 install -y -qq "${need[@]}" >/dev/null
  fi
}

# bench_start_nginx PORT DIR: serves DIR/www on 127.0.0.1:PORT; sets a cookie on every answer.
bench_start_nginx() {
  local port="$1" dir="$2"
  cat > "$dir/nginx.conf" <<CONF
worker_processes 1; daemon on; pid $dir/nginx.pid; error_log $dir/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port;
    root $dir/www;
    location /cookie/ { add_header Set-Cookie "sid=abc123; Path=/"; }
  }
}
CONF
  taskset -c 0 "$(command -v nginx || echo /usr/sbin/nginx)" -c "$dir/nginx.conf"
  sleep 0.3
}

bench_stop_nginx() {
  [ -f "$1/nginx.pid" ] && kill "$(cat "$1/nginx.pid")" 2>/dev/null || true
}

# bench_cpu_seconds TIMEFILE: user + system seconds from /usr/bin/time -v output.
bench_cpu_seconds() {
  local user sys
  user=$(awk -F': ' '/User time/ {print $2}' "$1")
  sys=$(awk -F': ' '/System time/ {print $2}' "$1")
  echo "$user + $sys" | bc -l
}
