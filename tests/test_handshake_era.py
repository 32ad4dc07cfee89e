"""host.driver.handshake with a pinned era over stdio (``host --protocol-era``): nothing of the other."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from interop_helpers import Recorder, child_env, new_host, serve_argv, write_spec_skill

from skills_core.adapters.asyncio_stdio import open_stdio_client
from skills_core.host.driver import handshake
from skills_core.messages import Era


@pytest.mark.parametrize(
    ("era", "sent"),
    [
        (Era.LEGACY, ["initialize", "notifications/initialized"]),
        (Era.MODERN, ["server/discover"]),
        (None, ["server/discover"]),
    ],
)
def test_pinned_era_over_stdio(tmp_path: Path, era: Era | None, sent: list[str]) -> None:
    write_spec_skill(tmp_path)

    async def main() -> list[str]:
        async with open_stdio_client(
            serve_argv(str(tmp_path)), label="s", env=child_env()
        ) as client:
            recorder = Recorder(client)
            host = new_host()
            await handshake(host, "s", recorder, timeout=10, era=era)
            features = host.features("s")
            assert features is not None
            assert features.skills
            return recorder.sent

    assert asyncio.run(main()) == sent
