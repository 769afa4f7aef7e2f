"""Which IP addresses a pin may be fetched from: public ones only.

A URL a pinner pastes makes the server connect somewhere, so every address a host
resolves to is checked before any connection: loopback, private, link-local,
multicast, reserved, unspecified and shared (carrier-grade NAT) addresses are refused,
in IPv4 and IPv6, and so is an IPv6 address that carries an IPv4 one (mapped,
compatible, 6to4, NAT64) unless the IPv4 address inside is public too.
"""

from __future__ import annotations

import ipaddress

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Refused whatever the ipaddress module of this Python thinks of them (its flags have
# changed between versions): IPv6 site-local (deprecated), and NAT64, whose gateway
# would connect to any IPv4 address it is handed, private ones included.
_ALWAYS_REFUSED = [
    ipaddress.ip_network("fec0::/10"),
    ipaddress.ip_network("64:ff9b::/96"),
    ipaddress.ip_network("64:ff9b:1::/48"),
]
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def refusal(address: Address, *, allow_loopback: bool = False) -> str | None:
    """Why ``address`` may not be fetched from (``"a loopback address"``, ...), or None if it
    may. ``allow_loopback`` lets loopback addresses through (tests serve pages locally)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d is a.b.c.d itself
            return refusal(address.ipv4_mapped, allow_loopback=allow_loopback)
        inner = _embedded_ipv4(address)
        if inner is not None:
            why = refusal(inner, allow_loopback=False)
            if why is not None:
                return f"{why} inside an IPv6 address"
    if address.is_loopback:
        return None if allow_loopback else "a loopback address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if any(address in network for network in _ALWAYS_REFUSED):
        return "a reserved address"
    if address.is_private:
        return "a private address"
    if address.is_reserved or not address.is_global:
        return "a reserved address"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries, by the transition schemes that route to it."""
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's address
    if address in _IPV4_COMPATIBLE and int(address) > 0xFFFF:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def parse(text: str) -> Address | None:
    """The IP address a resolver answered with (a scope such as ``%eth0`` dropped), or None."""
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
