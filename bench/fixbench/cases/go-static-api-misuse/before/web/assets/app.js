document.querySelectorAll(".down").forEach((el) => el.setAttribute("title", "down"));
