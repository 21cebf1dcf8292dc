// The console's icon, served at /favicon.ico (browsers ask for it on every site): a card in the
// console's colours, 32×32, a PNG inside an ICO container (drawn once from an SVG; 380 bytes).
export const FAVICON_ICO = Buffer.from(
  "AAABAAEAICAAAAEAIABmAQAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAARtJREFUeJzslr1qAkEUhc/dpEiTxDaEEEgWQkgXA8He0kIrGx9A8AH0EfQNfAAbK0Us7UVw7ESL1UbF0p8H8Lo/DlqIbrMzFvMVw7DMcs7MHe4cC5qxoBljQLuBezl5/fhNWUQlgH9AFEMUMK8BGu6Yy4vpoO19Im94+4yn3VkDKmFkZhPR9EvAxEUoRmr6BojpG4qRmsEdIDxDNQdN30DHdqCDL8f0gVtpREnHhh6EKYExcHwNT6nXqkj8/138sdvrI5vLIxID18TDrgnD2RJ4u7tGmDVhCPKAHWdoYOYICk6AsYFqDpoykIygGKkpA0kFipGad96wXS3Hj7EXQaB319uTG0ofEAVBKBVuKC3Mp4OWbwSaMa3YGNgDAAD//1CgWoQAAAAGSURBVAMALvJMW+C6nKgAAAAASUVORK5CYII=",
  "base64",
);
