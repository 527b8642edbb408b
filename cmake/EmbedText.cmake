# cmake -DIN=file.cuh -DOUT=file.inc -P EmbedText.cmake
#
# Writes the text of IN as the body of a C array initialiser, one string
# literal a line ("...\n",), for `static const char *const x[] = {
# #include "file.inc" NULL};`.  A string a line keeps every literal under
# ISO C's length limit; backslashes and double quotes are escaped.
if(NOT IN OR NOT OUT)
  message(FATAL_ERROR "EmbedText.cmake: give -DIN=<text file> -DOUT=<C include>")
endif()
file(READ "${IN}" text)
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
# every line, the last one included, ends in a newline
string(REGEX REPLACE "\n$" "" text "${text}")
string(REPLACE "\n" "\\n\",\n\"" text "${text}")
file(WRITE "${OUT}" "\"${text}\\n\",\n")
