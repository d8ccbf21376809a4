console.log("hello from script.js");
