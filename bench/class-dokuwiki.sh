# Sourced by bench/class when SITE=dokuwiki: Debian's DokuWiki, served by
# nginx and php-fpm (4 workers, held to the CPU share by the bench's
# cgroup; nginx outside it) on $port, as a private copy (its program,
# configuration and data under $work/wiki), so the system's wiki is never
# touched. Defines dokuwiki_fresh (a fresh copy of the wiki's data, its
# servers started anew) and dokuwiki_class (the class's scenario files in
# $work/class). Needs root, nginx, php-fpm and the dokuwiki package
# (scripts/services installs them).

wiki="$work/wiki"
wiki_students=3000

dokuwiki_install() {
  local need=()
  [ -f /usr/share/dokuwiki/doku.php ] || need+=(dokuwiki)
  compgen -G "/usr/sbin/php-fpm*" > /dev/null || need+=(php-fpm)
  command -v nginx > /dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
  if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]} ..." >&2
    apt-get -o DPkg::Lock::Timeout=1200 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 install -y -qq "${need[@]}" > /dev/null
  fi
}

dokuwiki_stop() {
  [ -f "$wiki/nginx.pid" ] && kill "$(cat "$wiki/nginx.pid")" 2> /dev/null || true
  if [ -f "$wiki/php-fpm.pid" ]; then
    local fpm; fpm=$(cat "$wiki/php-fpm.pid")
    kill "$fpm" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$fpm" 2> /dev/null || break; sleep 0.1; done
  fi
  rm -f "$wiki/nginx.pid" "$wiki/php-fpm.pid"
}

# The program and configuration, once: the accounts student1..N (DokuWiki
# reads unsalted MD5 hashes), the wiki's address, and the servers' files.
dokuwiki_setup() {
  mkdir -p "$wiki/tmp"
  cp -a /usr/share/dokuwiki "$wiki/app"
  cp -a /etc/dokuwiki "$wiki/conf"
  printf "<?php\nif(!defined('DOKU_CONF')) define('DOKU_CONF', '%s/');\n" "$wiki/conf" > "$wiki/app/inc/preload.php"
  printf "\n\$conf['savedir'] = '%s';\n\$conf['baseurl'] = '%s';\n" "$wiki/data" "$url" >> "$wiki/conf/local.php"
  python3 - "$wiki/conf/users.auth.php" "$wiki/students.csv" "$wiki_students" <<'PY'
import hashlib, sys
auth, csv, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(auth, "w") as a, open(csv, "w") as c:
    for i in range(1, n + 1):
        user, password = f"student{i}", f"pw-{i:05d}"
        a.write(f"{user}:{hashlib.md5(password.encode()).hexdigest()}:Student {i}:{user}@localhost:user\n")
        c.write(f"{user},{password}\n")
PY
  local fpm; fpm=$(compgen -G "/usr/sbin/php-fpm*" | head -1)
  printf '%s\n' "[global]" "pid = $wiki/php-fpm.pid" "error_log = $wiki/php-fpm.log" "daemonize = no" \
    "[www]" "user = root" "group = root" "listen = $wiki/php.sock" "listen.backlog = 4096" \
    "pm = static" "pm.max_children = 4" > "$wiki/fpm.conf"
  echo "$fpm" > "$wiki/fpm.path"
  cat > "$wiki/nginx.conf" <<CONF
user root;
worker_processes 1;
pid $wiki/nginx.pid;
error_log $wiki/nginx-error.log;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  access_log $wiki/access.log;
  client_body_temp_path $wiki/tmp;
  fastcgi_temp_path $wiki/tmp;
  server {
    listen 127.0.0.1:$port;
    root $wiki/app;
    index doku.php;
    location ~ ^/(data|conf|bin|inc|vendor)/ { deny all; }
    location ~ \.php\$ {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      fastcgi_pass unix:$wiki/php.sock;
    }
  }
}
CONF
}

# A fresh copy of the wiki's data (no page cache, no edits), its servers
# started anew: php-fpm in the bench's cgroup.
dokuwiki_fresh() {
  dokuwiki_stop
  [ -d "$wiki/app" ] || dokuwiki_setup
  rm -rf "$wiki/data" "$wiki/php.sock"
  cp -a /var/lib/dokuwiki/data "$wiki/data"
  : > "$wiki/access.log"
  sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$group" \
    "$(cat "$wiki/fpm.path")" -F -R -y "$wiki/fpm.conf" > /dev/null 2>&1 &
  for _ in $(seq 100); do [ -S "$wiki/php.sock" ] && break; sleep 0.1; done
  "$(command -v nginx || echo /usr/sbin/nginx)" -c "$wiki/nginx.conf"
  for _ in $(seq 50); do curl -fsS -o /dev/null "$url/doku.php" 2> /dev/null && break; sleep 0.1; done
}

# The class: scenarios/dokuwiki-class (nine in ten students read the
# welcome, syntax and DokuWiki pages, about 30 s each; one in ten also
# saves its own playground page; each logs in once with the login form's
# sectok, and every page loads as a browser loads it), its accounts the
# wiki's: the first nine tenths read, the rest write. The commands give
# the wiki's address, which replaces the files' base_url.
dokuwiki_class() {
  mkdir -p "$work/class"
  cp scenarios/dokuwiki-class/*.yaml "$work/class/"
  head -n $((wiki_students * 9 / 10)) "$wiki/students.csv" > "$work/class/readers.csv"
  tail -n +$((wiki_students * 9 / 10 + 1)) "$wiki/students.csv" > "$work/class/writers.csv"
  echo "DokuWiki (Debian's package) on nginx + php-fpm (4 workers), $wiki_students accounts; class in $work/class"
}
