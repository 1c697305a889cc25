"""A live-mode hook for tests (stands in for a real tool API)."""


async def answer(tool: str, arguments: dict, task_time: str) -> str:
    return f"live:{arguments.get('location')}"
