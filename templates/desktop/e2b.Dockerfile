# desktop: the template @e2b/desktop's Sandbox.create() asks for. An X server, XFCE, the tools
# the SDK drives (xdotool, scrot, xrandr, x11vnc, noVNC) and a browser, from Debian 12's own
# packages on the platform's `base`. Install it with `x template install desktop`; extend it
# with your own Dockerfile starting `FROM desktop`.
FROM base

RUN apt-get update && \
    apt-get install -y --no-install-recommends \
      xvfb xauth x11-utils x11-xserver-utils dbus-x11 \
      xfce4 xfce4-terminal xfce4-taskmanager thunar mousepad ristretto \
      xdotool scrot x11vnc net-tools novnc python3-websockify \
      xdg-utils libgtk-3-bin desktop-file-utils \
      firefox-esr galculator xpdf \
      fonts-dejavu-core fonts-liberation adwaita-icon-theme python3-numpy && \
    rm -rf /var/lib/apt/lists/*

# noVNC where the SDK runs it from (cd /opt/noVNC/utils && ./novnc_proxy ...), with its page
# at / as well as /vnc.html; Debian's websockify is the one novnc_proxy finds on PATH
RUN ln -s /usr/share/novnc /opt/noVNC && \
    ln -sf vnc.html /usr/share/novnc/index.html && \
    fc-cache -f

# the desktop as the SDK expects it: no screen blanking, no compositing (there is no GPU),
# Firefox as the web browser
COPY desktop /usr/local/share/x-desktop
RUN install -D -m 0644 /usr/local/share/x-desktop/xset.desktop /etc/xdg/autostart/x-xset-off.desktop && \
    install -D -m 0644 /usr/local/share/x-desktop/xfwm4.xml /etc/xdg/xfce4/xfconf/xfce-perchannel-xml/xfwm4.xml && \
    update-alternatives --set x-www-browser /usr/bin/firefox-esr && \
    install -d -o user -g user /home/user/Desktop
# no accessibility bus in a sandbox: GTK apps need not look for one at every start
ENV NO_AT_BRIDGE=1

USER user
WORKDIR /home/user
